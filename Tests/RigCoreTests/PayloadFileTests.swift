import RigDevices
import Testing

@testable import RigCore
@testable import RigFormat

/// The rig file's new axis keys (`payload`, `shaper`, `deadbandDeg`, `lagSeconds`) and
/// `settle`: read into the axis, and every bad value named with its place and what is valid.
@Suite struct PayloadFileTests {
    static func rig(_ axis: String, extra: String = "") -> String {
        """
        {
          "axes": [{"name": "pan", "channel": 0, \(axis)}]\(extra)
        }
        """
    }

    @Test func theKeysAreRead() throws {
        let text = Self.rig(
            #""payload": {"frequencyHz": 3, "damping": 0.03}, "shaper": {"type": "mzv", "frequencyHz": 3.2, "damping": 0.05}, "deadbandDeg": 0.4, "lagSeconds": 0.02"#,
            extra: #", "settle": {"sensor": "sim", "thresholdDegPerS": 0.3, "holdSeconds": 0.05, "timeoutSeconds": 2}"#)
        let rig = try RigParser.parse(text: text, file: "r.json")
        let axis = rig.axes[0]
        #expect(axis.payload == Payload(frequencyHz: 3, damping: 0.03))
        #expect(axis.shaper == ShaperConfig(kind: .mzv, frequencyHz: 3.2, damping: 0.05))
        #expect(axis.servo == ServoImperfection(deadbandDeg: 0.4, lagSeconds: 0.02))
        #expect(rig.settle?.thresholdDegreesPerSecond == 0.3)
        #expect(rig.settle?.holdSeconds == 0.05)
        #expect(rig.settle?.timeoutSeconds == 2)
    }

    @Test func aShapedAxisPlansTrapezoidsUnlessItsFileSetsAJerk() throws {
        func axis(_ keys: String) throws -> Axis { try RigParser.parse(text: Self.rig(#""maxAcceleration": 500"# + keys), file: "r.json").axes[0] }
        let shaper = #", "shaper": {"type": "zv", "frequencyHz": 3}"#
        #expect(try axis("").maxJerk == 500 / Axis.defaultJerkRampSeconds)
        #expect(try axis(shaper).maxJerk == 500 / Axis.shapedJerkRampSeconds)
        #expect(try axis(shaper + #", "maxJerk": 2500"#).maxJerk == 2500)
        // The shaped axis's 20° move: a trapezoid's time, not an S-curve's.
        let shaped = try axis(shaper)
        let move = PoseMove(from: [0], to: [20], axes: [shaped], tickSeconds: 0.005)
        let trapezoid = 2 * (20 / 500.0).squareRoot()
        #expect(move.durationSeconds < trapezoid + 0.006)
        #expect(PoseMove(from: [0], to: [20], axes: [try axis("")], tickSeconds: 0.005).durationSeconds > trapezoid + 0.05)
    }

    @Test(arguments: [
        (#""payload": {"frequencyHz": 0}"#, "r.json:2:69: error: $.axes[0].payload.frequencyHz:", "0.5…50 Hz"),
        (#""payload": {"frequencyHz": 3, "damping": 1.5}"#, "r.json:2:83: error: $.axes[0].payload.damping:", "0…0.7"),
        (#""payload": {"damping": 0.1}"#, "r.json:2:53: error: $.axes[0].payload:", "frequencyHz"),
        (#""payload": {"frequencyHz": 3, "dampin": 0.1}"#, "r.json:2:", "damping"),
        (#""shaper": {"type": "2hump-ei", "frequencyHz": 3}"#, "r.json:2:61: error: $.axes[0].shaper.type:", "\"zv\""),
        (#""shaper": {"frequencyHz": 3}"#, "r.json:2:52: error: $.axes[0].shaper:", "\"mzv\""),
        (#""deadbandDeg": 9"#, "r.json:2:57: error: $.axes[0].deadbandDeg:", "0…5"),
        (#""lagSeconds": -1"#, "r.json:2:56: error: $.axes[0].lagSeconds:", "0…0.5"),
    ])
    func badValuesSayWhereAndWhatIsValid(axis: String, start: String, valid: String) {
        let line = errorLine(.rig("bad", Self.rig(axis), ""))
        #expect(line.hasPrefix(start), "\(line)")
        #expect(line.contains(valid), "\(line)")
    }

    @Test func aServoModelOnAPwmAxisIsRefused() {
        let line = errorLine(.rig("pwm", Self.rig(#""kind": "pwm", "deadbandDeg": 0.4"#), ""))
        #expect(line.hasPrefix("r.json:2:57: error: $.axes[0].deadbandDeg:"), "\(line)")
        #expect(line.contains("servo"))
    }

    @Test func anUnknownSettleSensorIsRefusedWithTheValidOnes() {
        let line = errorLine(.rig("laser", Self.rig(#""idle": "hold""#, extra: #", "settle": {"sensor": "laser"}"#), ""))
        #expect(line.contains("$.settle.sensor"), "\(line)")
        #expect(line.contains("\"imu\"") && line.contains("\"liveView\"") && line.contains("\"sim\""), "\(line)")
    }

    @Test func anIMUSettleNeedsTheRigFilesIMU() {
        let line = errorLine(.rig("imu", Self.rig(#""idle": "hold""#, extra: #", "settle": {"sensor": "imu"}"#), ""))
        #expect(line.contains("$.settle.sensor"), "\(line)")
        #expect(line.contains("\"imu\": {\"bus\""), "\(line)")
    }

    @Test func aLiveViewSettleTakesItsFieldOfViewAndNoOtherSensorDoes() throws {
        let rig = try RigParser.parse(
            text: Self.rig(#""idle": "hold""#, extra: #", "settle": {"sensor": "liveView", "fovDeg": 54.4, "thresholdDegPerS": 1}"#), file: "r.json")
        #expect(rig.settle?.sensor == .liveView)
        #expect(rig.settle?.fieldOfViewDegrees == 54.4)
        let line = errorLine(.rig("sim", Self.rig(#""idle": "hold""#, extra: #", "settle": {"sensor": "sim", "fovDeg": 50}"#), ""))
        #expect(line.hasPrefix("r.json:2:98: error: $.settle.fovDeg:"), "\(line)")
        #expect(line.contains("liveView"), "\(line)")
        let wide = errorLine(.rig("wide", Self.rig(#""idle": "hold""#, extra: #", "settle": {"sensor": "liveView", "fovDeg": 200}"#), ""))
        #expect(wide.contains("$.settle.fovDeg") && wide.contains("1…179"), "\(wide)")
    }
}

import RigBLEControl
import RigDevices
import RigPCA9685
import Testing

@testable import RigCore
@testable import RigFormat

/// What valid program files turn into.
@Suite struct ProgramParserTests {
    static let rig = #"{"axes": [{"name": "pan", "channel": 0, "home": 5}, {"name": "tilt", "channel": 1, "home": -5}]}"#

    @Test func timelapseStepsFollowTheKeysFrameByFrame() throws {
        // Linear 0 → 40 over frames 0…4: 10 per frame. Tilt has no keys: home −5 throughout.
        let p = try parseProgram(
            """
            {"rig": \(Self.rig), "kind": "timelapse", "settleSeconds": 0.2,
             "timelapse": {"frames": 6, "keyframes": {"pan": [{"frame": 0, "value": 0, "interp": "linear"}, {"frame": 4, "value": 40}]}}}
            """)
        #expect(p.steps.map(\.pose) == [[0, -5], [10, -5], [20, -5], [30, -5], [40, -5], [40, -5]])
        #expect(p.steps.map(\.label) == ["frame 1", "frame 2", "frame 3", "frame 4", "frame 5", "frame 6"])
        #expect(p.steps.allSatisfy { $0.settleSeconds == 0.2 })
    }

    @Test func stepsKeepAxesTheyDoNotName() throws {
        let p = try parseProgram(
            """
            {"rig": \(Self.rig), "kind": "steps", "trigger": "interval:1.5",
             "steps": [{"pose": {"tilt": 10}}, {"pose": {"pan": 30}, "settleSeconds": 2, "label": "right"}, {"pose": {"tilt": 0}}]}
            """)
        // Unnamed axes start at home and then keep the previous step's position.
        #expect(p.steps.map(\.pose) == [[5, 10], [30, 10], [30, 0]])
        #expect(p.steps.map(\.label) == ["step 1", "right", "step 3"])
        #expect(p.steps.map(\.settleSeconds) == [0.5, 2, 0.5])
        #expect(p.trigger == .interval(seconds: 1.5))
    }

    @Test func keyframesDurationIsTheLastKeyOfAnyAxis() throws {
        let p = try parseProgram(
            """
            {"rig": \(Self.rig), "kind": "keyframes",
             "keyframes": {"tilt": [{"t": 1, "value": 0}, {"t": 7.5, "value": 10}], "pan": [{"t": 0, "value": 5}, {"t": 3, "value": 0}]}}
            """)
        guard case .continuous(let tracks, let duration) = p.motion else {
            Issue.record("not continuous")
            return
        }
        #expect(duration == 7.5)
        #expect(tracks[0]?.keys.map(\.time) == [0, 3])
        #expect(tracks[1]?.keys.map(\.value) == [0, 10])
        #expect(p.isStepped == false && p.steps.isEmpty)
    }

    @Test func triggersParse() {
        #expect(Trigger("auto") == .auto)
        #expect(Trigger("interval:0.25") == .interval(seconds: 0.25))
        #expect(Trigger("interval:0") == nil)
        #expect(Trigger("interval:-1") == nil)
        #expect(Trigger("interval:") == nil)
        #expect(Trigger("Auto") == nil)
        #expect(Trigger.interval(seconds: 2).description == "interval:2")
    }

    @Test func rigDefaults() throws {
        let rig = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 3}, {"name": "led", "kind": "pwm", "channel": 4}]}"#, file: "r.json")
        #expect(rig.name == "rig" && rig.loopRateHz == 100 && rig.output.type == "sim")
        let pan = rig.axes[0]
        let led = rig.axes[1]
        // Servo: 1000…2000 µs over −90…90°, soft limits that whole range, home 0, 90°/s, 180°/s².
        #expect(pan.softRange == -90...90 && pan.home == 0 && pan.maxVelocity == 90 && pan.maxAcceleration == 180)
        #expect(pan.command(forPosition: 45) == .pulse(microseconds: 1750))
        // pwm: 0…100 %, home at the lower soft limit, 50 %/s, 100 %/s².
        #expect(led.softRange == 0...100 && led.home == 0 && led.maxVelocity == 50 && led.maxAcceleration == 100)
        #expect(led.command(forPosition: 30) == .duty(percent: 30))
    }

    @Test func outputsParseWithTheirDrivers() throws {
        let pca = try RigParser.parse(
            text: #"{"output": {"type": "pca9685", "address": "0x41", "frequencyHz": 60}, "axes": [{"name": "p", "channel": 15}]}"#, file: "r.json")
        guard case .pca9685(let config) = try OutputDrivers.config(pca) else {
            Issue.record("not pca9685")
            return
        }
        #expect(config.address == 0x41 && config.frequencyHz == 60 && config.bus == "/dev/i2c-1")
        let ble = try RigParser.parse(
            text: #"{"output": {"type": "blecontrol", "address": "aa:bb:cc:dd:ee:0f"}, "axes": [{"name": "p", "channel": 7}]}"#, file: "r.json")
        guard case .blecontrol(let board) = try OutputDrivers.config(ble) else {
            Issue.record("not blecontrol")
            return
        }
        var expected = BLEControlOutputConfig()
        expected.address = "AA:BB:CC:DD:EE:0F"
        #expect(board == expected)
    }

    /// The channel check is the driver's, at the axis's place in the file.
    @Test func aChannelTheDriverLacksIsRefusedAtTheAxis() throws {
        let rig = try RigParser.parse(
            text: """
                {"output": {"type": "blecontrol"},
                 "axes": [{"name": "p", "channel": 7}, {"name": "t", "channel": 8}]}
                """, file: "r.json")
        #expect(rig.axes.map(\.channel) == [7, 8])
        try rig.output.checkChannels(of: rig.axes, count: 9)
        let error = #expect(throws: FileError.self) { try OutputDrivers.validate(rig) }
        #expect(error?.description == "r.json:2:65: error: $.axes[1].channel: channel 8 does not exist on a blecontrol output; valid: 0…7")
    }

    /// The simulated PCA9685's frequency must leave a period longer than every servo's pulse.
    @Test func aSimFrequencyTooFastForThePulsesIsRefusedAtItsPlace() throws {
        let rig = try RigParser.parse(
            text: #"{"output": {"type": "sim", "frequencyHz": 500}, "axes": [{"name": "p", "channel": 0, "pulseUs": [500, 2500]}]}"#, file: "r.json")
        let error = #expect(throws: FileError.self) { try OutputDrivers.validate(rig) }
        let text = error?.description ?? ""
        #expect(text.hasPrefix("r.json:1:") && text.contains("$.output.frequencyHz") && text.contains("valid: 24…399 Hz"), "\(text)")
    }
}

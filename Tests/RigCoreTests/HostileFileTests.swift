import Testing

@testable import RigCore
@testable import RigFormat
@testable import RigStitch

/// Files written to break `rig`: absurd numbers, huge keys and values, bad bytes, odd line
/// endings. Each must end in one short compiler-style line (or a bounded check), never a
/// trap, a hang or a silent verdict.
@Suite struct HostileFileTests {
    static let rig = #"{"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}"#

    static let exact: [BadFile] = [
        .rig(
            "non-zero literal that underflows to 0", #"{"axes": [{"name": "pan", "channel": 1e-400}]}"#,
            "r.json:1:38: error: $.axes[0].channel: number 1e-400 is too small for a double and would read as 0; write 0 or a magnitude of at least 1e-300"),
        .rig(
            "literal too large for a double", #"{"loopRateHz": 1e400, "axes": []}"#,
            "r.json:1:16: error: $.loopRateHz: number 1e400 is too large for a double; valid: magnitudes up to 1.8e308"),
        .rig(
            "CR-only line endings count as lines", "{\r\"axes\": [\r{\"name\": \"pan\", \"channel\": 99}]}",
            "r.json:3:28: error: $.axes[0].channel: channel 99 does not exist on a sim output; valid: 0…15"),
        .rig(
            "CR LF line endings count once", "{\r\n\"axes\": [\r\n{\"name\": \"pan\", \"channel\": 99}]}",
            "r.json:3:28: error: $.axes[0].channel: channel 99 does not exist on a sim output; valid: 0…15"),
        .rig(
            "calibration angles of ±1e300", #"{"axes": [{"name": "pan", "channel": 0, "angleDeg": [-1e300, 1e300]}]}"#,
            "r.json:1:54: error: $.axes[0].angleDeg[0]: -1e+300 ° is out of range; valid: -360…360 °"),
        .rig(
            "tiny maxVelocity", #"{"axes": [{"name": "pan", "channel": 0, "maxVelocity": 1e-300}]}"#,
            "r.json:1:56: error: $.axes[0].maxVelocity: 1e-300 °/s is out of range; valid: 0.1…10000 °/s"),
        .rig(
            "huge maxAcceleration", #"{"axes": [{"name": "pan", "channel": 0, "maxAcceleration": 1e19}]}"#,
            "r.json:1:60: error: $.axes[0].maxAcceleration: 1e+19 °/s² is out of range; valid: 0.1…100000 °/s²"),
        .program(
            "keyframe value of 1e19", #"{"rig": \#(rig), "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 1e19}]}}"#,
            "p.json:1:145: error: $.keyframes.pan[0].value: 1e+19 is out of range; valid: -3600…3600"),
        .program(
            "keyframe time of 1e6", #"{"rig": \#(rig), "kind": "keyframes", "keyframes": {"pan": [{"t": 1e6, "value": 0}]}}"#,
            "p.json:1:133: error: $.keyframes.pan[0].t: 1000000 s is out of range; valid: 0…86400 s"),
        .program(
            "bezier handle of 1e300",
            #"{"rig": \#(rig), "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0, "interp": "bezier", "bezier": [0, 1e300, 1, 0]}]}}"#,
            "p.json:1:178: error: $.keyframes.pan[0].bezier: bezier y handles must lie in -10…10 (times the segment's change); found y1 = 1e+300, y2 = 0"),
        .program(
            "panorama tilt to 1e300", #"{"rig": \#(rig), "kind": "panorama", "panorama": {"lens": {"focalLengthMm": 24}, "pan": [0, 90], "tilt": [0, 1e300]}}"#,
            "p.json:1:176: error: $.panorama.tilt[1]: 1e+300 ° is out of range; valid: -90…90 °"),
        .program(
            "panorama pan over more than a turn",
            #"{"rig": \#(rig), "kind": "panorama", "panorama": {"lens": {"focalLengthMm": 24}, "pan": [-360, 360], "tilt": [0, 0]}}"#,
            "p.json:1:155: error: $.panorama.pan: [-360, 360] spans 720°, more than a full turn; valid: a span of at most 360°"),
        .program(
            "panorama of 843,489 shots",
            #"{"rig": \#(rig), "kind": "panorama", "panorama": {"lens": {"horizontalFovDeg": 1, "verticalFovDeg": 1}, "pan": [0, 360], "tilt": [-90, 90]}}"#,
            "p.json:1:116: error: $.panorama: the panorama needs more than 10000 shots; valid: at most 10000 (use a wider lens, less overlap or a smaller pan/tilt range)"
        ),
        .program(
            "interval trigger of 1e300 s", #"{"rig": \#(rig), "kind": "steps", "trigger": "interval:1e300", "steps": [{"pose": {"pan": 0}}]}"#,
            "p.json:1:112: error: $.trigger: interval 1e+300 s is out of range; valid: interval:SECONDS with SECONDS in 0.01…86400"),
        .program(
            "step pose of 1e300", #"{"rig": \#(rig), "kind": "steps", "steps": [{"pose": {"pan": 1e300}}]}"#,
            "p.json:1:128: error: $.steps[0].pose.pan: 1e+300 is out of range; valid: -3600…3600"),
    ]

    @Test(arguments: exact) func reportsTheExactLine(_ file: BadFile) {
        #expect(errorLine(file) == file.expected)
    }

    /// A key, a value and a string a megabyte long: the line stays short, and the "did you
    /// mean" search skips a key far longer than any valid one.
    @Test func megabyteKeysAndValuesGiveShortLines() {
        let long = String(repeating: "x", count: 1 << 20)
        let cases = [
            #"{"axes": [{"name": "pan", "channel": 0}], "\#(long)": 1}"#,
            #"{"axes": [{"name": "pan", "channel": 0, "idle": "\#(long)"}]}"#,
            #"{"axes": [{"name": "pan", "channel": 0}], "a": 1, "a": 2, "\#(long)": 1, "\#(long)": 2}"#,
            #"{"axes": [{"name": "pan", "channel": 1\#(String(repeating: "1", count: 1 << 20))}]}"#,
            #"{"axes": [{"name": "pan", "channel": 0.\#(String(repeating: "5", count: 1 << 20))}]}"#,
        ]
        for text in cases {
            let line = errorLine(.rig("", text, ""))
            #expect(line.utf8.count < 400, "\(line.prefix(200))")
            // A megabyte of digits after "0." reads as a Double and is named by its value.
            let named = line.contains("duplicate key \"a\"") || line.contains("expected an integer, found 0.5555555555555556")
            #expect(line.contains("characters)…") || named, "\(line.prefix(200))")
        }
    }

    @Test func invalidUTF8IsLocatedAtItsByte() throws {
        var bytes = Array("{\n  \"name\": \"pä".utf8)
        bytes += [0xFF]
        bytes += Array("n\"\n}".utf8)
        #expect(UTF8Text.firstInvalidByte(in: bytes) == bytes.firstIndex(of: 0xFF))
        #expect(
            throws: FileError(
                file: "r.json", location: SourceLocation(line: 2, column: 14), path: "$",
                message: "invalid UTF-8 (byte 0xFF); rig and program files must be UTF-8 text")
        ) {
            try UTF8Text.decode(bytes, file: "r.json")
        }
        // Overlong, surrogate, past U+10FFFF, truncated: each at its first bad byte.
        for bad in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xE2, 0x28, 0xA1], [0x80]] as [[UInt8]] {
            #expect(UTF8Text.firstInvalidByte(in: Array("ab".utf8) + bad + Array("cd".utf8)) == 2, "\(bad)")
        }
        #expect(UTF8Text.firstInvalidByte(in: Array("a é € 𝄞".utf8)) == nil)
        // The same through the parser's own byte input (used by the fuzz target).
        var parser = JSONParser(bytes: Array("{\"a\": \"x".utf8) + [0xC3, 0x28] + Array("\"}".utf8))
        #expect(throws: JSONSyntaxError(message: "invalid UTF-8 in string (byte 0xC3)", location: SourceLocation(line: 1, column: 9), path: "$.a")) {
            _ = try parser.parseDocument()
        }
    }

    /// Every numeric slot of a program, filled with every extreme: parsing either refuses
    /// it with a short line or yields a program whose check, plan and plot finish within a
    /// counted budget of work.
    @Test func extremeNumbersNeverTrapAndWorkStaysBounded() throws {
        let extremes = [
            "1e300", "-1e300", "1e19", "-1e19", "1e-300", "-1e-300", "5e-324", "1.7976931348623157e308",
            "0", "-0", "1e-400", "1e400", "0.1", "86400", "3600", "-3600", "360", "99999",
        ]
        let slots = [
            #"{"rig": {"axes": [{"name": "pan", "channel": 0, "maxVelocity": X}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": -80}, {"t": 1, "value": 80, "interp": "linear"}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0, "maxAcceleration": X}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 2, "value": 80}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0, "angleDeg": [-90, X]}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0, "softLimits": [-1, X]}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": X}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": X, "value": 10}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 1, "value": X}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0, "interp": "bezier", "bezier": [0.5, X, 0.5, X]}, {"t": 1, "value": 10}]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "steps", "settleSeconds": X, "steps": [{"pose": {"pan": X}}, {"pose": {"tilt": X}}]}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "panorama", "panorama": {"lens": {"focalLengthMm": X}, "pan": [0, 359.999], "tilt": [-20, 40]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "panorama", "panorama": {"lens": {"horizontalFovDeg": 1, "verticalFovDeg": 1}, "pan": [0, X], "tilt": [-20, X]}}"#,
            #"{"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "timelapse", "timelapse": {"frames": X, "keyframes": {"pan": [{"frame": 0, "value": -10}, {"frame": 1, "value": X}]}}}"#,
        ]
        let budget = 20_000
        var parsed = 0
        var refused = 0
        for slot in slots {
            for x in extremes {
                let text = slot.replacingOccurrences(of: "X", with: x)
                let program: Program
                do {
                    program = try ProgramParser.parse(text: text, file: "p.json") { _, at throws(FileError) in throw at.error("no rig files here") }
                } catch {
                    #expect(error.description.utf8.count < 400)
                    refused += 1
                    continue
                }
                parsed += 1
                let start = program.rig.homePose
                let estimate = MotionBudget.ticks(rig: program.rig, motion: program.motion, startPose: start)
                let report = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: start, maxTicks: budget)
                // Counted work: never more ticks than the budget, and over it means not simulated at all.
                #expect(report.ticks <= budget)
                if estimate > Double(budget) {
                    #expect(report.unchecked == .tooLong(estimatedTicks: estimate, maxTicks: budget, loopRateHz: program.rig.loopRateHz))
                    #expect(report.ticks == 0 && !report.feasible)
                } else {
                    #expect(report.unchecked == nil, "\(text): estimate \(estimate) below the \(report.ticks) ticks it took")
                    #expect(Double(report.ticks) <= estimate)
                    _ = PlotRenderer.svg(program: program, startPose: start, maxTicks: budget)
                }
                #expect((program.panorama?.shots.count ?? 0) <= Bounds.maxShots)
                for problem in report.problems { #expect(problem.description.utf8.count < 400) }
            }
        }
        #expect(parsed > 20 && refused > 50, "parsed \(parsed), refused \(refused)")
    }

    @Test func aCheckThatRunsOutOfBudgetIsNeverFeasible() throws {
        let program = try ProgramParser.parse(
            text: #"{"rig": \#(Self.rig), "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}, {"t": 600, "value": 10}]}}"#,
            file: "p.json"
        ) { _, at throws(FileError) in throw at.error("no rig files") }
        let start = program.rig.homePose
        let full = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: start)
        #expect(full.feasible && full.unchecked == nil)
        // The same program with a budget below its length: refused before simulating.
        let short = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: start, maxTicks: full.ticks - 1)
        #expect(!short.feasible && short.ticks == 0)
        guard case .tooLong = short.unchecked else {
            Issue.record("expected tooLong, got \(String(describing: short.unchecked))")
            return
        }
    }

    /// Every distinct violating interval is listed, consecutive frames merged with their
    /// span and worst value; not only the first per axis and limit.
    @Test func everyViolatingIntervalIsListed() throws {
        let text = #"""
            {"rig": {"axes": [{"name": "pan", "channel": 0, "maxVelocity": 50, "maxAcceleration": 1000}]}, "kind": "keyframes",
             "keyframes": {"pan": [{"t": 0, "value": 0, "interp": "linear"}, {"t": 1, "value": 40, "interp": "linear"}, {"t": 2, "value": 40, "interp": "linear"},
                                   {"t": 2.5, "value": 0, "interp": "linear"}, {"t": 3.5, "value": 0, "interp": "linear"}, {"t": 4, "value": 35}]}}
            """#
        let program = try ProgramParser.parse(text: text, file: "p.json") { _, at throws(FileError) in throw at.error("no rig files") }
        let report = FeasibilityChecker.check(rig: program.rig, motion: program.motion, startPose: [0])
        let velocity = report.problems.filter { $0.violation.limit == .velocity }
        // 40° in 0.5 s and 35° in 0.5 s: two separate intervals at 80 and 70 °/s.
        #expect(velocity.count == 2)
        #expect(velocity.map(\.frames) == [50, 50])
        #expect(velocity.map { rounded($0.violation.value) } == ["80", "70"])
        #expect(velocity.first?.description == "axis \"pan\" from t=2.02s to 2.51s (keyframe path): velocity up to 80°/s exceeds maxVelocity 50°/s")
        #expect(report.problemCount == report.problems.count)
    }

    /// A full-circle pan shoots each place once: no two shots of a row within a fraction
    /// of the pan step of each other, counting the way round.
    @Test func aNearlyFullCirclePanDoesNotShootTheSamePlaceTwice() {
        for upper in [359.999, 359.0, 360.0, 350.0] {
            let spec = PanoramaSpec(
                fieldOfView: FieldOfView(horizontalDegrees: 60, verticalDegrees: 40), overlap: 0.25,
                pan: 0...upper, tilt: 0...0, panAxis: 0, tiltAxis: 1)
            let pans = PanoramaPlanner.plan(spec, currentPan: 0, currentTilt: 0).shots.map(\.panDegrees).sorted()
            #expect(pans.count == 8, "\(upper): \(pans)")
            for (a, b) in zip(pans, pans.dropFirst() + [pans[0] + 360]) {
                #expect(b - a >= 44, "\(upper): shots at \(a) and \(b)")
            }
            #expect(pans.allSatisfy { (0...upper).contains($0) })
        }
    }
}

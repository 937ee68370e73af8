import Testing

@testable import RigCore
@testable import RigFormat

@Suite struct ShotLogTests {
    static let hash = String(repeating: "0123456789abcdef", count: 4)

    static let events: [ShotLogEvent] = [
        .start(
            ShotLogStart(
                program: "programs/pano \"wide\".json", programSha256: hash, steps: 24, startedAt: "2026-11-23T20:31:54Z",
                startAxisNames: ["pan", "tilt"], startPose: [0, -12.5])),
        .shot(ShotLogShot(step: 1, label: "row 1, column 1", axisNames: ["pan", "tilt"], pose: [-80, -20.25], startSeconds: 1.46, endSeconds: 1.81)),
        .shot(
            ShotLogShot(
                step: 2, label: "row 1, column 2", axisNames: ["pan", "tilt"], pose: [-57.142857142857146, -20.25], startSeconds: 4.01, endSeconds: 4.36,
                bracket: 2)),
        .missed(ShotLogMissed(step: 3, slotSeconds: 6.5, startSeconds: 6.75)),
        .shot(
            ShotLogShot(
                step: 2, label: "row 1, column 2", axisNames: ["pan", "tilt"], pose: [-57.142857142857146, -20.25], startSeconds: 9, endSeconds: 9.35,
                redo: true)),
        .warning(ShotLogWarning(message: "the recipe waits 23 times\nthe program has 24 steps")),
        .end(ShotLogEnd(reason: .stopped, lastStep: 2)),
        .start(ShotLogStart(program: "p.json", programSha256: hash, steps: 24, fromStep: 3)),
        .end(ShotLogEnd(reason: .fault, lastStep: nil, message: "camera: gpiochip0 line 27: Device or resource busy")),
    ]

    /// What a camera that reports its files adds: the file, the download, the settings, and
    /// a shot it never confirmed.
    static let cameraEvents: [ShotLogEvent] = [
        .shot(
            ShotLogShot(
                step: 4, label: "step 4", axisNames: ["pan"], pose: [10], startSeconds: 12, endSeconds: 12.5, bracket: 3,
                file: "/store_00010001/DCIM/100CANON/IMG_0042.CR3", downloaded: "shots/IMG \"0042\".CR3",
                settings: [CameraSetting("shutterspeed", "1/250"), CameraSetting("f-number", "f/8")])),
        .missed(ShotLogMissed(step: 5, slotSeconds: nil, startSeconds: 14, reason: "the camera did not confirm the shot, tried twice")),
        .missed(ShotLogMissed(step: 6, bracket: 3, slotSeconds: nil, startSeconds: 15, reason: "downloading … failed: No space left on device")),
        .start(ShotLogStart(program: "pano.json", programPath: "/home/me/a/pano.json", programSha256: hash, steps: 9)),
    ]

    @Test(arguments: events + cameraEvents)
    func eachEventRoundTripsThroughOneLine(_ event: ShotLogEvent) throws {
        let line = event.jsonLine()
        #expect(!line.contains("\n"))
        #expect(try ShotLogEvent.decode(line: line, file: "run.jsonl", lineNumber: 1) == event)
    }

    @Test func theLinesAreTheIssuesFormat() {
        #expect(
            Self.events[1].jsonLine()
                == #"{"event":"shot","step":1,"label":"row 1, column 1","pose":{"pan":-80,"tilt":-20.25},"startSeconds":1.46,"endSeconds":1.81}"#)
        #expect(Self.events[6].jsonLine() == #"{"event":"end","reason":"stopped","lastStep":2}"#)
        #expect(Self.events[0].jsonLine().hasPrefix(#"{"event":"start","program":"programs/pano \"wide\".json","programSha256":"0123"#))
        #expect(Self.events[0].jsonLine().hasSuffix(#""steps":24,"startedAt":"2026-11-23T20:31:54Z","startPose":{"pan":0,"tilt":-12.5}}"#))
    }

    @Test func aWholeLogRoundTripsAndAnswersResume() throws {
        let log = ShotLog(events: Self.events)
        let read = try ShotLog(text: log.text, file: "run.jsonl")
        #expect(read == log)
        #expect(read.lastStart?.fromStep == 3)
        #expect(read.lastShot?.step == 2)
        #expect(read.lastShot?.redo == true)
        #expect(read.resumeStep() == 3)
        #expect(read.lastRunEnd?.reason == .fault)
        #expect(!read.isFinished)
        // The redo replaces the first shot of step 2 bracket 1; bracket 2 stays.
        #expect(read.finalShots.map { "\($0.step)/\($0.bracket ?? 1)/\($0.startSeconds)" } == ["1/1/1.46", "2/2/4.01", "2/1/9.0"])
        #expect(read.shots[0].value(of: "tilt") == -20.25)
        #expect(read.shots[0].value(of: "roll") == nil)
    }

    @Test func aRunCutShortHasNoEndAndATornLastLineIsDropped() throws {
        let text = ShotLog(events: Array(Self.events[0...2])).text + #"{"event":"shot","step":3,"label":"row 1, col"#
        let read = try ShotLog(text: text, file: "run.jsonl")
        #expect(read.events == Array(Self.events[0...2]))
        #expect(read.tornLastLine?.hasPrefix(#"{"event":"shot","step":3"#) == true)
        #expect(read.lastRunEnd == nil)
        #expect(!read.isFinished)
        #expect(read.resumeStep() == 3)
    }

    /// A power cut just before a line's last byte (its line break) leaves what reads as a
    /// whole event: it is torn all the same, as the writer that cuts it into LOG.torn says,
    /// so `--resume` shoots that step again and `export` does not name a frame for it.
    @Test func aLastLineThatLostOnlyItsLineBreakIsTorn() throws {
        let whole = ShotLog(events: Array(Self.events[0...2])).text
        let cut = String(whole.dropLast())
        let read = try ShotLog(text: cut, file: "run.jsonl")
        #expect(read.events == Array(Self.events[0...1]))
        #expect(read.tornLastLine == Self.events[2].jsonLine())
        #expect(read.resumeStep() == 2)
        #expect(read.finalShots.map(\.step) == [1])
        // Blank space after the last line break is no event, torn or whole.
        #expect(try ShotLog(text: whole + "  ", file: "run.jsonl").tornLastLine == nil)
    }

    static func shot(_ step: Int, _ bracket: Int?, interrupted: Bool = false) -> ShotLogEvent {
        .shot(
            ShotLogShot(
                step: step, label: "step \(step)", axisNames: ["pan"], pose: [Double(step)], startSeconds: Double(step), endSeconds: Double(step) + 0.5,
                bracket: bracket, interrupted: interrupted))
    }

    /// A step cut short inside its bracket (a full card at frame 3 of 3, a stop after frame
    /// 1 of `shotsPerStep`) is resumed whole, the last step included; a step with all its
    /// frames is not.
    @Test func aStepMissingAFrameIsResumedWhole() throws {
        let start = Self.events[0]
        let complete: [ShotLogEvent] = (1...8).flatMap { step in (1...3).map { bracket in Self.shot(step, bracket) } }
        func resume(_ tail: [ShotLogEvent], frames: Int = 3) -> Int {
            ShotLog(events: [start] + complete + tail).resumeStep(framesPerStep: frames)
        }
        #expect(resume([]) == 9)
        #expect(resume([Self.shot(9, 1), Self.shot(9, 2)]) == 9, "card full at frame 3")
        #expect(resume([Self.shot(9, 1), Self.shot(9, 2, interrupted: true)]) == 9, "stopped during frame 2")
        #expect(resume([Self.shot(9, 1), Self.shot(9, 2), Self.shot(9, 3)]) == 10)
        #expect(resume([Self.shot(9, 1)], frames: 5) == 9)
        // A run without a camera holds each step once: that step is whole.
        #expect(resume([Self.shot(9, nil)]) == 10)
        // A resumed run that shot the step again whole completes it.
        let again: [ShotLogEvent] = (1...3).map { bracket in Self.shot(9, bracket) }
        let resumed: [ShotLogEvent] = [Self.shot(9, 1), Self.shot(9, 2), .end(ShotLogEnd(reason: .fault, lastStep: 9)), Self.events[7]] + again
        #expect(resume(resumed) == 10)
        let log = ShotLog(events: [start] + complete + [Self.shot(9, 1)])
        #expect(!log.isComplete(step: 9, framesPerStep: 3) && log.isComplete(step: 8, framesPerStep: 3))
    }

    /// A log whose line endings an editor or a Windows share turned into CRLF reads the same.
    @Test func crlfLineEndingsReadLikeLF() throws {
        let log = ShotLog(events: Self.events)
        let crlf = log.text.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(crlf.contains("\r\n"))
        #expect(try ShotLog(text: crlf, file: "run.jsonl") == log)
        // Torn after a CR: still only the last line is lost.
        let torn = crlf + #"{"event":"shot","st"#
        #expect(try ShotLog(text: torn, file: "run.jsonl").events == log.events)
    }

    @Test func aFinishedLogHasNothingToResume() throws {
        let text = ShotLog(events: [Self.events[0], Self.events[1], .end(ShotLogEnd(reason: .done, lastStep: 24))]).text
        #expect(try ShotLog(text: text, file: "run.jsonl").isFinished)
    }

    static let bad: [(String, String)] = [
        // A malformed line that is not the last one: the crash excuse does not apply.
        (
            #"{"event":"shot","step":0,"label":"a","pose":{},"startSeconds":1,"endSeconds":2}"#,
            "run.jsonl:2:24: error: $.step: 0 is out of range; valid: 1…2147483647"
        ),
        (
            #"{"event":"shot","step":1,"label":"a","pose":{"pan":"x"},"startSeconds":1,"endSeconds":2}"#,
            "run.jsonl:2:52: error: $.pose.pan: expected a number, found a string"
        ),
        (
            #"{"event":"shot","step":1,"label":"a","pose":{},"startSeconds":2,"endSeconds":1}"#,
            "run.jsonl:2:78: error: $.endSeconds: 1 s is before startSeconds 2 s; valid: endSeconds ≥ startSeconds"
        ),
        (
            #"{"event":"shoot"}"#,
            #"run.jsonl:2:10: error: $.event: "shoot" is not valid; valid: "start", "shot", "missed", "warning", "end", "image""#
        ),
        (
            #"{"event":"end","reason":"crash","lastStep":1}"#,
            #"run.jsonl:2:25: error: $.reason: "crash" is not valid; valid: "done", "stopped", "fault""#
        ),
        (
            #"{"event":"end","reason":"done","lastStep":1,"extra":1}"#,
            #"run.jsonl:2:45: error: $.extra: unknown key "extra"; valid keys here: "event", "lastStep", "message", "reason""#
        ),
        (
            #"{"event":"end","reason":"done"}"#,
            #"run.jsonl:2:1: error: $: missing required key "lastStep" (the step of the last shot, or null)"#
        ),
        (
            // Not a 309-digit pitch in an export: a position no program could ask for.
            #"{"event":"shot","step":1,"label":"a","pose":{"tilt":1e308},"startSeconds":1,"endSeconds":1}"#,
            "run.jsonl:2:53: error: $.pose.tilt: 1e+308 is out of range; valid: -3600…3600"
        ),
        (
            #"{"event":"end","reason":"done",}"#,
            "run.jsonl:2:32: error: $: trailing comma before '}'; JSON allows no comma after the last member"
        ),
    ]

    @Test(arguments: bad)
    func aBadLineNamesItsLineColumnAndPath(_ line: String, _ expected: String) {
        let text = Self.events[0].jsonLine() + "\n" + line + "\n" + Self.events[6].jsonLine() + "\n"
        #expect(throws: FileError.self) { try ShotLog(text: text, file: "run.jsonl") }
        do {
            _ = try ShotLog(text: text, file: "run.jsonl")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func aLogMustStartWithAStart() {
        let text = "\n" + Self.events[1].jsonLine() + "\n"
        do {
            _ = try ShotLog(text: text, file: "run.jsonl")
            Issue.record("no error")
        } catch {
            #expect(error.description.hasPrefix("run.jsonl:2:1: error: $.event: a shot log starts with a \"start\" event"))
        }
    }

    @Test func nonFiniteNumbersAreNeverWrittenAsInvalidJSON() {
        let shot = ShotLogShot(step: 1, label: "a", axisNames: ["pan"], pose: [.nan], startSeconds: 0, endSeconds: .infinity)
        #expect(shot.jsonLine().contains(#""pan":null"#))
        #expect(throws: FileError.self) { try ShotLogEvent.decode(line: shot.jsonLine(), file: "f", lineNumber: 1) }
    }

    @Test func jsonTextEscapesControlCharactersAndQuotes() throws {
        let s = "a\"b\\c\n\r\t\u{01}é"
        let node = try JSONParser.parse(JSONText.string(s))
        #expect(node.value == .string(JSONString(s)))
    }
}

@Suite struct SHA256Tests {
    // FIPS 180-4 examples, and one that pads into a second block.
    @Test func knownDigests() {
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }
}

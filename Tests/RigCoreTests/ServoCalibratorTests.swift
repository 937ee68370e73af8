import RigFormat
import Testing

@testable import RigCore

@Suite struct ServoCalibratorTests {
    /// Feeds a string of terminal bytes; returns the actions.
    func feed(_ calibrator: inout ServoCalibrator, _ bytes: String) -> [ServoCalibrator.Action] {
        var decoder = ServoCalibrator.Key.Decoder()
        var actions: [ServoCalibrator.Action] = []
        for byte in bytes.utf8 {
            guard let key = decoder.feed(byte, typing: calibrator.typed != nil) else { continue }
            actions.append(calibrator.handle(key))
        }
        return actions
    }

    @Test func startsInARangeAroundTheStartPulseThatOnlyWideningWidens() {
        var c = ServoCalibrator(startMicroseconds: 1499.6)
        #expect(c.pulseMicroseconds == 1500)
        #expect(c.window == 1200...1800)
        // Seven coarse steps up: stopped at the edge, and said why.
        let actions = feed(&c, String(repeating: "\u{1B}[A", count: 7))
        #expect(actions.compactMap { if case .move(let p) = $0 { p } else { nil } } == [1550, 1600, 1650, 1700, 1750, 1800])
        #expect(c.message == "at the edge of the range shown (w widens it)")
        _ = feed(&c, "w\u{1B}[A")
        #expect(c.window == 1100...1900)
        #expect(c.pulseMicroseconds == 1850)
        // Never wider than a rig file takes.
        var edge = ServoCalibrator(startMicroseconds: 2900)
        #expect(edge.window == 2600...3000)
        _ = feed(&edge, "wwww")
        #expect(edge.window == 2200...3000)
    }

    @Test func endsOfTravelBoundTheSteps() {
        var c = ServoCalibrator(startMicroseconds: 1500)
        _ = feed(&c, "\u{1B}[B[\u{1B}[A\u{1B}[A]")
        #expect(c.lowEnd == 1450)
        #expect(c.highEnd == 1550)
        _ = feed(&c, "\u{1B}[A\u{1B}[A")
        #expect(c.pulseMicroseconds == 1550)
        #expect(c.message == "at the marked end of travel")
        #expect(c.allowed == 1450...1550)
    }

    @Test func deadbandIsTheStepsBetweenStartAndMoved() {
        var c = ServoCalibrator(startMicroseconds: 1500)
        _ = feed(&c, "d...d")
        #expect(c.deadbandMicroseconds == 3)
        #expect(c.statusLine.contains("deadband 3 µs"))
    }

    @Test func typedAnglesBecomeATableSortedByAngle() throws {
        var c = ServoCalibrator(startMicroseconds: 1500)
        // Keys that are not part of a number are ignored while typing; "1.2.3" is not one.
        _ = feed(&c, "a0\r\u{1B}[A\u{1B}[Aa1.2x,.39\u{7F}\r")
        #expect(c.points.count == 1)
        #expect(c.message?.contains("is not an angle") == true)
        _ = feed(&c, "a44.5\r\u{1B}[B\u{1B}[B\u{1B}[B\u{1B}[B\u{1B}[Ba-45\r")
        #expect(c.points.map(\.angleDeg) == [0, 44.5, -45])
        // An Esc while typing cancels the angle.
        _ = feed(&c, "a12\u{1B}")
        #expect(c.typed == nil)
        #expect(c.points.count == 3)
        let actions = feed(&c, "s")
        guard case .save(let table) = actions.last else {
            Issue.record("no save: \(actions)")
            return
        }
        #expect(table.angles == [-45, 0, 44.5])
        #expect(table.pulses == [1350, 1500, 1600])
    }

    @Test func saveIsRefusedUntilThePointsMakeACalibration() {
        var c = ServoCalibrator(startMicroseconds: 1500)
        #expect(feed(&c, "a0\rs") == [.none, .none, .none, .none])
        #expect(c.message == "cannot save yet: a calibration needs at least 2 points")
        // Angles that do not rise with the pulse one way: not monotonic.
        _ = feed(&c, "\u{1B}[Aa10\r\u{1B}[Aa5\rs")
        #expect(c.message == "cannot save yet: pulse widths must rise (or fall) strictly with the angle")
        #expect(feed(&c, "q") == [.quit])
    }

    /// Whatever keys arrive, no move ever leaves the range shown at that moment.
    @Test func noKeySequenceMovesOutsideTheRangeShown() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let alphabet: [String] = ["\u{1B}[A", "\u{1B}[B", "\u{1B}[C", "\u{1B}[D", ",", ".", "w", "[", "]", "d", "a", "1", "-", "\r", "\u{1B}", "x", "s", "q"]
        for run in 0..<300 {
            var c = ServoCalibrator(startMicroseconds: Double(200 + Int(next() % 2801)))
            var decoder = ServoCalibrator.Key.Decoder()
            for _ in 0..<400 {
                let keys = alphabet[Int(next() % UInt64(alphabet.count))]
                for byte in keys.utf8 {
                    guard let key = decoder.feed(byte, typing: c.typed != nil) else { continue }
                    let window = c.window
                    let action = c.handle(key)
                    if case .move(let pulse) = action {
                        #expect(window.contains(pulse) && c.window.contains(pulse) && c.allowed.contains(pulse), "run \(run): \(pulse) outside \(window)")
                    }
                    #expect(ServoCalibrator.pulseLimits.contains(c.pulseMicroseconds))
                }
            }
        }
    }
}

@Suite struct JSONSourceEditTests {
    let text = """
        {
          "axes": [
            { "name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90],
              "home": 0 },
            {
              "name": "tilt",
              "channel": 1,
              "inverted": true
            }
          ]
        }
        """

    func axis(_ root: JSONNode, _ i: Int) -> (JSONNode, [JSONMember]) {
        guard case .object(let top) = root.value, case .array(let axes) = top[0].value.value, case .object(let m) = axes[i].value else {
            fatalError("not the test document")
        }
        return (axes[i], m)
    }

    @Test func replaceRemoveAndInsertKeepEveryOtherByte() throws {
        let bytes = Array(text.utf8)
        var parser = JSONParser(bytes: bytes)
        let root = try parser.parseDocument()
        var edit = JSONSourceEdit(bytes: bytes)
        let (pan, panMembers) = axis(root, 0)
        try edit.replace(panMembers[2], with: "\"calibration\": [[-90, 510], [90, 2490]]")
        try edit.remove(panMembers[3], of: pan)
        let (_, tiltMembers) = axis(root, 1)
        try edit.insert(key: "park", valueText: "0", after: tiltMembers[2])
        try edit.replace(tiltMembers[1].value, with: "3")
        let out = String(decoding: try edit.applied(), as: UTF8.self)
        #expect(
            out == """
                {
                  "axes": [
                    { "name": "pan", "channel": 0, "calibration": [[-90, 510], [90, 2490]],
                      "home": 0 },
                    {
                      "name": "tilt",
                      "channel": 3,
                      "inverted": true,
                      "park": 0
                    }
                  ]
                }
                """)
        _ = try JSONParser.parse(out)
    }

    @Test func offsetsCountCharactersAfterMultibyteText() throws {
        let doc = "{\"name\": \"Kopf für Ü\", \"x\": [1,\r\n 2]}"
        let bytes = Array(doc.utf8)
        var parser = JSONParser(bytes: bytes)
        let root = try parser.parseDocument()
        guard case .object(let m) = root.value, case .array(let items) = m[1].value.value else { throw JSONSourceEdit.Problem(description: "shape") }
        let edit = JSONSourceEdit(bytes: bytes)
        #expect(String(decoding: bytes[try edit.extent(of: m[1].value)], as: UTF8.self) == "[1,\r\n 2]")
        #expect(String(decoding: bytes[try edit.extent(of: items[1])], as: UTF8.self) == "2")
        #expect(String(decoding: bytes[try edit.extent(of: m[0])], as: UTF8.self) == "\"name\": \"Kopf für Ü\"")
    }
}

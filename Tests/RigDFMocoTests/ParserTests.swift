import RigDFMoco
import Testing

@Suite struct ParserTests {
    func parse(_ line: String, motors: Int = 2) -> Result<DFMocoRequest, DFMocoRejection> {
        DFMocoParser.parse(Array(line.utf8), motorCount: motors)
    }

    @Test(arguments: [
        ("hi", DFMocoRequest.hello),
        ("ms", .movingStatus),
        ("sa", .stopAll),
        ("go", .go),
        ("mp 2", .motorPosition(motor: 2)),
        ("sm 1", .stopMotor(motor: 1)),
        ("zm 1", .zeroMotor(motor: 1)),
        ("mm 1 -2500", .moveMotor(motor: 1, position: -2500)),
        ("np 2 120", .newPosition(motor: 2, position: 120)),
        ("im 1 40", .inchMotor(motor: 1, destination: 40)),
        ("pr 2 4000", .pulseRate(motor: 2, stepsPerSecond: 4000)),
        ("jm 1 9000", .jogMotor(motor: 1, destination: 9000, velocity: nil)),
        ("jm 1 -9000 2500", .jogMotor(motor: 1, destination: -9000, velocity: 2500)),
        ("mm  1\t300 ", .moveMotor(motor: 1, position: 300)),
        ("bf 250 500", .blurSetup(GoMotionRequest(exposureMilliseconds: 250, blur: 500, motors: []))),
        (
            "bf 100 1000 2 0 10 30 1 5 5 5",
            .blurSetup(
                GoMotionRequest(
                    exposureMilliseconds: 100, blur: 1000,
                    motors: [
                        .init(motor: 2, previous: 0, current: 10, next: 30), .init(motor: 1, previous: 5, current: 5, next: 5),
                    ]))
        ),
    ])
    func readsEveryRequest(_ line: String, _ expected: DFMocoRequest) {
        #expect(parse(line) == .success(expected))
    }

    @Test(arguments: [
        ("xx 1", DFMocoRejection.unknownCommand("xx")),
        ("HI", .unknownCommand("HI")),
        ("hi there", .wrongArgumentCount(command: "hi", expected: "0", found: 1)),
        ("mm 1", .wrongArgumentCount(command: "mm", expected: "2", found: 1)),
        ("mp", .wrongArgumentCount(command: "mp", expected: "1", found: 0)),
        ("jm 1 2 3 4", .wrongArgumentCount(command: "jm", expected: "2 or 3", found: 4)),
        ("bf 100 500 1 0 0", .wrongArgumentCount(command: "bf", expected: "2 + 4·n (exposure, blur, then motor p0 p1 p2 per motor)", found: 5)),
        ("mm 1 12.5", .notANumber(command: "mm", argument: "12.5")),
        ("mm one 5", .notANumber(command: "mm", argument: "one")),
        ("mm 1 -", .notANumber(command: "mm", argument: "-")),
        ("mm 1 0x10", .notANumber(command: "mm", argument: "0x10")),
        ("mm 3 5", .motorOutOfRange(command: "mm", motor: 3, motorCount: 2)),
        ("sm 0", .motorOutOfRange(command: "sm", motor: 0, motorCount: 2)),
        ("mp -1", .motorOutOfRange(command: "mp", motor: -1, motorCount: 2)),
        ("mm 1 99999999999999999999999", .valueOutOfRange(command: "mm", what: "position", value: 9_999_999_999_999, valid: DFMocoParser.stepRange)),
        ("jm 1 5 10001", .valueOutOfRange(command: "jm", what: "velocity", value: 10001, valid: 0...10_000)),
        ("pr 1 0", .valueOutOfRange(command: "pr", what: "steps/s", value: 0, valid: DFMocoParser.pulseRateRange)),
        ("bf 100 1001", .valueOutOfRange(command: "bf", what: "blur", value: 1001, valid: 0...1000)),
        ("bf 0 500", .valueOutOfRange(command: "bf", what: "exposure (ms)", value: 0, valid: DFMocoParser.exposureRange)),
        ("bf 100 500 1 0 1 2 1 0 1 2", .duplicateMotor(command: "bf", motor: 1)),
    ])
    func rejectsBadLines(_ line: String, _ expected: DFMocoRejection) {
        #expect(parse(line) == .failure(expected))
    }

    @Test func hugeNumbersSaturateInsteadOfOverflowing() {
        guard case .failure(.valueOutOfRange(_, _, let value, _)) = parse("np 1 -\(String(repeating: "9", count: 80))") else {
            Issue.record("not rejected as out of range")
            return
        }
        #expect(value < -2_147_483_647)
    }

    @Test func nonASCIIIsShownEscapedAndRejected() {
        let line: [UInt8] = [0x6D, 0x6D, 0x20, 0x31, 0x20, 0xFF, 0x00]
        #expect(DFMocoParser.parse(line, motorCount: 2) == .failure(.notANumber(command: "mm", argument: "\\xFF\\x00")))
        #expect(DFMocoParser.parse([0xC3, 0xA9], motorCount: 2) == .failure(.unknownCommand("\\xC3\\xA9")))
    }

    @Test func rejectionsReadAsLogLines() {
        #expect(DFMocoRejection.motorOutOfRange(command: "mm", motor: 9, motorCount: 2).description == "mm: motor 9 does not exist; valid: 1…2")
        #expect(DFMocoRejection.wrongArgumentCount(command: "mp", expected: "1", found: 0).description == "mp: 0 arguments; valid: 1")
    }
}

@Suite struct LineBufferTests {
    @Test func splitsOnCRLFAcrossReads() {
        var buffer = DFMocoLineBuffer()
        #expect(buffer.append(Array("hi\r\nmm 1".utf8)) == [.line(Array("hi".utf8))])
        #expect(buffer.append(Array(" 20\r".utf8)) == [.line(Array("mm 1 20".utf8))])
        #expect(buffer.append(Array("\nms\n\r\n".utf8)) == [.line(Array("ms".utf8))])
    }

    @Test func dropsALongLineWholeAndRecovers() {
        var buffer = DFMocoLineBuffer()
        let long = [UInt8](repeating: 0x41, count: 300)
        let items = buffer.append(long + Array("\r\nsa\r\n".utf8))
        #expect(items == [.tooLong(bytes: 257), .line(Array("sa".utf8))])
    }

    @Test func aLineOfExactlyTheLimitPasses() {
        var buffer = DFMocoLineBuffer()
        let line = [UInt8](repeating: 0x41, count: DFMocoLineBuffer.maximumLineBytes)
        #expect(buffer.append(line + [0x0A]) == [.line(line)])
    }

    @Test func endlessGarbageNeverGrowsTheBuffer() {
        var buffer = DFMocoLineBuffer()
        var overflows = 0
        for _ in 0..<100 {
            overflows += buffer.append([UInt8](repeating: 0x7A, count: 1000)).count
        }
        // One report for the one endless line, however long it gets.
        #expect(overflows == 1)
        #expect(buffer.append(Array("\nhi\n".utf8)) == [.line(Array("hi".utf8))])
    }
}

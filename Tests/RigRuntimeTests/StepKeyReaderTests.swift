import RigRuntime
import RigSky
import Testing

@Suite struct StepKeyReaderTests {
    func keys(_ text: String) -> [StepKeyCommand] {
        var reader = StepKeyReader()
        return text.utf8.compactMap { reader.feed($0) }
    }

    @Test func singleKeysInARawTerminal() {
        #expect(keys("\r") == [.next])
        #expect(keys("rbq") == [.redo, .back, .stop])
        #expect(keys("hH") == [.home, .home])
        #expect(keys("g12\r") == [.goTo(step: 12)])
        // Backspace edits the number; anything else cancels it (and is not a command).
        #expect(keys("g13\u{7F}4\r\r") == [.goTo(step: 14), .next])
        #expect(keys("g1x\r") == [.next])
        #expect(keys("g\r") == [])
        #expect(keys("zZ?") == [])
        // + and - (and = and _, the same keys unshifted or shifted) nudge a ramp.
        let third = StepKeyCommand.nudge(by: RampNudge.stepEV)
        let minusThird = StepKeyCommand.nudge(by: -RampNudge.stepEV)
        #expect(keys("+=-_") == [third, third, minusThird, minusThird])
    }

    @Test func typedLinesWhenStdinIsNotATerminal() {
        #expect(StepKeyReader.parse(line: "") == .next)
        #expect(StepKeyReader.parse(line: " r ") == .redo)
        #expect(StepKeyReader.parse(line: "B") == .back)
        #expect(StepKeyReader.parse(line: "g 7") == .goTo(step: 7))
        #expect(StepKeyReader.parse(line: "g7") == .goTo(step: 7))
        #expect(StepKeyReader.parse(line: "q") == .stop)
        #expect(StepKeyReader.parse(line: " Home ") == .home)
        #expect(StepKeyReader.parse(line: "g x") == nil)
        #expect(StepKeyReader.parse(line: "hello") == nil)
        #expect(StepKeyReader.parse(line: " + ") == .nudge(by: RampNudge.stepEV))
        #expect(StepKeyReader.parse(line: "-") == .nudge(by: -RampNudge.stepEV))
    }
}

import RigCore
import RigDFMoco
import RigFormat
import Testing

@Suite struct ConfigTests {
    func rig(_ dfmoco: String) throws(FileError) -> Rig {
        try RigParser.parse(
            text: """
                {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}], "dfmoco": \(dfmoco)}
                """, file: "r.json")
    }

    func config(_ dfmoco: String) throws(FileError) -> DFMocoConfig {
        let rig = try rig(dfmoco)
        return try DFMocoConfig.parse(rig.dfmoco, axes: rig.axes)
    }

    func error(_ dfmoco: String) -> String {
        do {
            _ = try config(dfmoco)
            return "no error"
        } catch { return error.description }
    }

    @Test func readsMotorsAndSteps() throws {
        let config = try config(#"{"motors": ["tilt", "pan"], "stepsPerDegree": 12.5}"#)
        #expect(DFMocoMotorMap(rig: try rig(#"{"motors": ["tilt", "pan"], "stepsPerDegree": 12.5}"#)).axisIndices == [1, 0])
        #expect(config.motorAxes == [1, 0])
        #expect(config.stepsPerDegree == 12.5)
    }

    @Test func defaultsToEveryAxisInFileOrder() throws {
        let withKey = try config("{}")
        #expect(withKey == DFMocoConfig(motorAxes: [0, 1], stepsPerDegree: 100))
        let rig = try RigParser.parse(text: #"{"axes": [{"name": "a", "channel": 3}, {"name": "b", "channel": 1}]}"#, file: "r.json")
        #expect(rig.dfmoco == nil)
        #expect(DFMocoMotorMap(rig: rig).axisIndices == [0, 1])
    }

    @Test(arguments: [
        (#"{"motors": ["roll"]}"#, #"r.json:1:97: error: $.dfmoco.motors[0]: the rig has no axis "roll"; its axes: "pan", "tilt""#),
        (#"{"motors": ["pan", "pan"]}"#, #"r.json:1:104: error: $.dfmoco.motors[1]: axis "pan" is listed twice; each axis can be one motor"#),
        (#"{"motors": []}"#, "r.json:1:96: error: $.dfmoco.motors: must not be empty"),
        (#"{"stepsPerDegree": 0}"#, "r.json:1:104: error: $.dfmoco.stepsPerDegree: 0 steps/° is out of range; valid: 1…100000 steps/°"),
        (#"{"stepsPerDegree": "100"}"#, "r.json:1:104: error: $.dfmoco.stepsPerDegree: expected a number, found a string"),
        (#"{"step": 1}"#, #"r.json:1:86: error: $.dfmoco.step: unknown key "step"; valid keys here: "motors", "stepsPerDegree""#),
    ])
    func reportsBadKeysWithTheirPlace(_ dfmoco: String, _ expected: String) {
        #expect(error(dfmoco) == expected)
    }
}

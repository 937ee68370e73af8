import Testing

@testable import RigCore
@testable import RigFormat

@Suite struct CameraConfigTests {
    func rig(_ extra: String) throws(FileError) -> Rig {
        try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0}], \#(extra)}"#, file: "r.json")
    }

    @Test func theCameraSectionKeepsItsTypeTimingsAndTheRestForItsBackend() throws {
        let camera = try #require(
            try rig(#""camera": {"type": "gpio", "shutterLine": 5, "focusLine": null, "focusMs": 300, "shutterMs": 100, "afterShotMs": 2000}"#).camera)
        #expect(camera.type == "gpio")
        #expect(camera.focusSeconds == 0.3)
        #expect(camera.shutterSeconds == 0.1)
        #expect(camera.afterShotSeconds == 2)
        // The backend's keys stay in the section, with their place in the file.
        let section = try camera.section.object(sharedKeys: CameraConfig.sharedKeys)
        #expect(try section.required("shutterLine").integer() == 5)
        #expect(section.optional("focusLine")?.isNull() == true)
        #expect(camera.section.path == "$.camera")
        #expect(try rig("\"name\": \"x\"").camera == nil)
    }

    static let bad: [(String, String)] = [
        (#""camera": {"type": ""}"#, #"r.json:1:62: error: $.camera.type: must not be empty"#),
        (#""camera": {"type": "gpio", "shutterMs": 5}"#, "r.json:1:83: error: $.camera.shutterMs: 5 ms is out of range; valid: 10…10000 ms"),
        (#""camera": {}"#, #"r.json:1:53: error: $.camera: missing required key "type" (the camera's type, such as "gpio", "gphoto2" or "sim")"#),
    ]

    @Test(arguments: bad) func badCameraKeysAreLocated(_ extra: String, _ expected: String) {
        #expect(throws: FileError.self) { try rig(extra) }
        do { _ = try rig(extra) } catch { #expect(error.description == expected) }
    }

    @Test func backlashIsPerAxisAndBounded() throws {
        let lash = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0, "softLimits": [-10, 10], "backlashDeg": 1.5}]}"#, file: "r.json")
        #expect(lash.axes[0].backlashDeg == 1.5)
        do {
            _ = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0, "softLimits": [-10, 10], "backlashDeg": 11}]}"#, file: "r.json")
            Issue.record("no error")
        } catch {
            #expect(error.description == "r.json:1:81: error: $.axes[0].backlashDeg: 11 ° is out of range; valid: 0…10 °")
        }
    }

    func program(_ shoot: String) throws(FileError) -> Program {
        try ProgramParser.parse(
            text:
                #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "focusMs": 100, "shutterMs": 200, "afterShotMs": 1000}}, "kind": "steps", \#(shoot) "steps": [{"pose": {"pan": 1}}]}"#,
            file: "p.json"
        ) { path, at throws(FileError) in throw at.error("no rig files here") }
    }

    @Test func theShootKeyAndTheCameraMakeTheShotTiming() throws {
        let normal = try #require(try program("").shotTiming)
        #expect(normal.shotSeconds == 0.1 + 0.2)
        #expect(normal.afterShotSeconds == 1)
        #expect(normal.shotsPerStep == 1)
        // A 1 s exposure outlasts the 0.2 s shutter press: the rig holds until it is over.
        let long = try #require(try program(#""shoot": {"exposureSeconds": 1, "shotsPerStep": 3},"#).shotTiming)
        #expect(long.shutterHoldSeconds == 0.2)
        #expect(long.shotSeconds == 1.1)
        #expect(long.shotsPerStep == 3)
        let bulb = try #require(try program(#""shoot": {"exposureSeconds": 30, "bulb": true},"#).shotTiming)
        #expect(bulb.shutterHoldSeconds == 30)
        #expect(bulb.shotSeconds == 30.1)
        do {
            _ = try program(#""shoot": {"bulb": true},"#)
            Issue.record("no error")
        } catch {
            #expect(error.description.hasSuffix("$.shoot: bulb mode holds the shutter for exposureSeconds; give exposureSeconds > 0"))
        }
    }
}

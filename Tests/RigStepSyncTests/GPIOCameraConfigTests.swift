import RigCore
import RigFormat
import RigRuntime
import RigStepSync
import Testing

/// The gpio camera's own section, read by its own module (and the sim camera's, which has
/// none of its keys).
@Suite struct GPIOCameraConfigTests {
    func gpio(_ extra: String) throws(FileError) -> GPIOCameraConfig {
        let rig = try RigParser.parse(text: #"{"axes": [{"name": "pan", "channel": 0}], \#(extra)}"#, file: "r.json")
        guard let camera = rig.camera else { throw FileError(file: "r.json", location: SourceLocation(line: 1, column: 1), path: "$", message: "no camera") }
        if camera.type == SimCamera.type {
            try SimCamera.checkConfig(camera)
            return GPIOCameraConfig()
        }
        return try GPIOCameraConfig.parse(camera, buttons: ButtonsConfig.parse(rig.buttons))
    }

    @Test func aGPIOCameraReadsItsLines() throws {
        let camera = try gpio(#""camera": {"type": "gpio", "shutterLine": 5, "focusLine": null, "focusMs": 300}"#)
        #expect(camera.lines == [5])
        let defaults = try gpio(#""camera": {"type": "gpio"}"#)
        #expect(defaults.chip == "gpiochip0")
        #expect(defaults.lines == [27, 22])
        #expect(defaults.activeLow == false)
    }

    static let bad: [(String, String)] = [
        (
            #""camera": {"type": "sim", "shutterLine": 3}"#,
            #"r.json:1:84: error: $.camera.shutterLine: "shutterLine" is for a "gpio" camera; a "sim" camera has no lines"#
        ),
        (
            #""camera": {"type": "gpio", "shutterLine": 22}"#,
            #"r.json:1:85: error: $.camera.shutterLine: line 22 is the focus line (focusLine's default); set "focusLine" to another line, or null if focus is not wired"#
        ),
        (
            #""camera": {"type": "gpio", "shutterLine": 13}, "buttons": {}"#,
            #"r.json:1:53: error: $.camera: line 13 of gpiochip0 is already used by "buttons"; the camera needs lines of its own"#
        ),
        (
            #""camera": {"type": "gpio", "port": "usb:001,002"}"#,
            #"r.json:1:70: error: $.camera.port: unknown key "port"; valid keys here: "activeLow", "afterShotMs", "chip", "focusLine", "focusMs", "shutterLine", "shutterMs", "type""#
        ),
    ]

    @Test(arguments: bad) func badGPIOKeysAreLocated(_ extra: String, _ expected: String) {
        do {
            _ = try gpio(extra)
            Issue.record("no error for \(extra)")
        } catch { #expect(error.description == expected) }
    }
}

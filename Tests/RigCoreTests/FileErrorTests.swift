import RigDevices
import Testing

@testable import RigCore
@testable import RigFormat

/// One malformed file and the exact line `rig` must print for it. Columns are counted by
/// hand from the documents below (two-space indents, one space after ':' and ',').
struct BadFile: CustomTestStringConvertible, Sendable {
    enum Kind: Sendable { case rig, program }
    var name: String
    var kind: Kind
    var text: String
    var expected: String
    var testDescription: String { name }

    static func rig(_ name: String, _ text: String, _ expected: String) -> BadFile { BadFile(name: name, kind: .rig, text: text, expected: expected) }
    static func program(_ name: String, _ text: String, _ expected: String) -> BadFile { BadFile(name: name, kind: .program, text: text, expected: expected) }
}

/// The error line for a document, or "no error": parsed as `rig check` does, each device
/// section read by its driver (`Devices.check`).
func errorLine(_ file: BadFile) -> String {
    do {
        switch file.kind {
        case .rig: try Devices.check(RigParser.parse(text: file.text, file: "r.json"))
        case .program:
            let program = try ProgramParser.parse(text: file.text, file: "p.json") { path, at throws(FileError) in
                if path == "rigs/bench.json" { return (#"{"axes": [{"name": "pan", "channel": 99}]}"#, path) }
                throw at.error("cannot read rig file \"\(path)\": no such file")
            }
            try Devices.check(program.rig)
        }
        return "no error"
    } catch {
        return error.description
    }
}

@Suite struct FileErrorTests {
    static let syntax: [BadFile] = [
        .rig(
            "trailing comma in object",
            """
            {
              "name": "bench",
              "axes": [{"name": "pan", "channel": 0}],
            }
            """, "r.json:4:1: error: $: trailing comma before '}'; JSON allows no comma after the last member"),
        .rig(
            "trailing comma in array",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0},
              ]
            }
            """, "r.json:4:3: error: $.axes: trailing comma before ']'; JSON allows no comma after the last element"),
        // The error points at the opening quote, not at the end of the file.
        .rig(
            "unterminated string at end of file",
            """
            {
              "name": "bench
            """, #"r.json:2:11: error: $.name: unterminated string: no closing '"'"#),
        .rig(
            "unterminated string at end of line",
            """
            {
              "name": "bench,
              "axes": []
            }
            """, #"r.json:2:11: error: $.name: unterminated string: no closing '"' before the end of the line (write a line break in a string as \n)"#),
        .rig(
            "bad escape",
            """
            {
              "name": "be\\qnch",
              "axes": []
            }
            """, #"r.json:2:15: error: $.name: invalid escape '\q' in string"#),
        .rig(
            "leading zero",
            """
            {
              "loopRateHz": 050,
              "axes": []
            }
            """, "r.json:2:17: error: $.loopRateHz: invalid number: leading zeros are not allowed"),
        .rig(
            "duplicate key",
            """
            {
              "name": "a",
              "name": "b",
              "axes": []
            }
            """, #"r.json:3:3: error: $: duplicate key "name""#),
        .rig(
            "trailing garbage",
            """
            {"axes": [{"name": "pan", "channel": 0}]}
            {}
            """, "r.json:2:1: error: $: unexpected '{' after the end of the document"),
        // A UTF-8 byte order mark is skipped and does not count as a column.
        .rig(
            "BOM is fine, columns after it", "\u{FEFF}{\"loopRateHz\": 5, \"axes\": [{\"name\": \"pan\", \"channel\": 0}]}",
            "r.json:1:16: error: $.loopRateHz: 5 Hz is out of range; valid: 20…500 Hz"),
        .rig(
            "single-quoted key",
            """
            {
              'name': "bench",
              "axes": []
            }
            """, #"r.json:2:3: error: $: expected a string key in double quotes, found "'""#),
        .rig("end of file inside an array", #"{"axes": ["#, "r.json:1:11: error: $.axes[0]: unexpected end of file, expected a value"),
    ]

    static let types: [BadFile] = [
        .rig(
            "channel as a string",
            """
            {
              "axes": [
                {"name": "pan", "channel": "0"}
              ]
            }
            """, "r.json:3:32: error: $.axes[0].channel: expected an integer, found a string"),
        .rig(
            "channel not whole",
            """
            {
              "axes": [
                {"name": "pan", "channel": 1.5}
              ]
            }
            """, "r.json:3:32: error: $.axes[0].channel: expected an integer, found 1.5"),
        .rig("name as a number", #"{"name": 5, "axes": []}"#, "r.json:1:10: error: $.name: expected a string, found a number"),
        // A choice given as another type says the choices too (it said only "a string").
        .rig(
            "shaper type as a number", #"{"axes": [{"name": "pan", "channel": 0, "shaper": {"type": 5, "frequencyHz": 3}}]}"#,
            #"r.json:1:60: error: $.axes[0].shaper.type: expected one of "zv", "mzv", "ei", "zvd", found a number"#),
        .rig("axes as an object", #"{"axes": {}}"#, "r.json:1:10: error: $.axes: expected an array, found an object"),
        .rig("no axes", #"{"axes": []}"#, "r.json:1:10: error: $.axes: must not be empty"),
        .rig(
            "soft limits with one number",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "softLimits": [0]}
              ]
            }
            """, "r.json:3:49: error: $.axes[0].softLimits: expected an array of 2 numbers, found 1 element"),
        .rig(
            "missing channel",
            """
            {
              "axes": [
                {"name": "pan"}
              ]
            }
            """, #"r.json:3:5: error: $.axes[0]: missing required key "channel" (the output channel number)"#),
        .rig(
            "axis name with a space",
            """
            {
              "axes": [
                {"name": "pan axis", "channel": 0}
              ]
            }
            """, #"r.json:3:14: error: $.axes[0].name: "pan axis" is not a valid axis name; use letters, digits, '-' and '_'"#),
    ]

    static let unknownKeys: [BadFile] = [
        .rig(
            "misspelt axis key",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "maxVelocty": 30}
              ]
            }
            """,
            #"r.json:3:35: error: $.axes[0].maxVelocty: unknown key "maxVelocty" (did you mean "maxVelocity"?); valid keys here: "angleDeg", "backlashDeg", "calibration", "channel", "deadbandDeg", "home", "idle", "inverted", "kind", "lagSeconds", "maxAcceleration", "maxJerk", "maxVelocity", "name", "park", "payload", "pulseUs", "shaper", "softLimits""#
        ),
        .rig(
            "misspelt root key",
            """
            {
              "loopRate": 100,
              "axes": [{"name": "pan", "channel": 0}]
            }
            """,
            #"r.json:2:3: error: $.loopRate: unknown key "loopRate" (did you mean "loopRateHz"?); valid keys here: "$schema", "axes", "buttons", "camera", "description", "dfmoco", "group", "imu", "jog", "loopRateHz", "name", "output", "settle", "site", "stepSync""#
        ),
        .rig(
            "misspelt output key",
            """
            {
              "output": {"type": "pca9685", "adress": "0x40"},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """,
            #"r.json:2:33: error: $.output.adress: unknown key "adress" (did you mean "address"?); valid keys here: "address", "bus", "frequencyHz", "oscillatorHz", "phaseStagger", "type""#
        ),
        .rig(
            "a PCA9685 frequency its oscillator cannot make",
            """
            {
              "output": {"type": "pca9685", "frequencyHz": 24, "oscillatorHz": 27000000},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """,
            "r.json:2:48: error: $.output.frequencyHz: 24 Hz cannot be made with a 27000000 Hz oscillator: the slowest it makes is 25.75 Hz; valid: 25.75…1647.95 Hz"
        ),
        .rig(
            "unknown output type",
            """
            {
              "output": {"type": "gpio"},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, #"r.json:2:22: error: $.output.type: "gpio" is not valid; valid: "sim", "pca9685", "blecontrol""#),
        .program(
            "misspelt program key",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "steps",
              "setleSeconds": 1,
              "steps": [{"pose": {"pan": 10}}]
            }
            """,
            #"p.json:4:3: error: $.setleSeconds: unknown key "setleSeconds" (did you mean "settleSeconds"?); valid keys here: "$schema", "description", "kind", "rig", "settleSeconds", "shoot", "site", "start", "steps", "stopRecipeAtEnd", "trigger""#
        ),
        .program(
            "unknown keyframe key",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0, "ease": "linear"}]
              }
            }
            """, #"p.json:5:34: error: $.keyframes.pan[0].ease: unknown key "ease"; valid keys here: "bezier", "interp", "t", "value""#),
    ]

    static let ranges: [BadFile] = [
        .rig(
            "loop rate too high",
            """
            {
              "loopRateHz": 1000,
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, "r.json:2:17: error: $.loopRateHz: 1000 Hz is out of range; valid: 20…500 Hz"),
        .rig(
            "pca9685 channel 16",
            """
            {
              "output": {"type": "pca9685"},
              "axes": [{"name": "pan", "channel": 16}]
            }
            """, "r.json:3:39: error: $.axes[0].channel: channel 16 does not exist on a pca9685 output; valid: 0…15"),
        .rig(
            "blecontrol channel 8",
            """
            {
              "output": {"type": "blecontrol"},
              "axes": [{"name": "pan", "channel": 8}]
            }
            """, "r.json:3:39: error: $.axes[0].channel: channel 8 does not exist on a blecontrol output; valid: 0…7"),
        .rig(
            "pca9685 frequency",
            """
            {
              "output": {"type": "pca9685", "frequencyHz": 2000},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, "r.json:2:48: error: $.output.frequencyHz: 2000 Hz is out of range; valid: 24…1526 Hz"),
        .rig(
            "I2C address out of range",
            """
            {
              "output": {"type": "pca9685", "address": "0x80"},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, "r.json:2:44: error: $.output.address: I2C address 0x80 is out of range; valid: 0x03…0x77"),
        .rig(
            "I2C address not hex",
            """
            {
              "output": {"type": "pca9685", "address": "zz"},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, #"r.json:2:44: error: $.output.address: "zz" is not an I2C address; write it like "0x40""#),
        .rig(
            "BLE address too short",
            """
            {
              "output": {"type": "blecontrol", "address": "AA:BB:CC:DD:EE"},
              "axes": [{"name": "pan", "channel": 0}]
            }
            """, #"r.json:2:47: error: $.output.address: "AA:BB:CC:DD:EE" is not a Bluetooth address; write it like "AA:BB:CC:DD:EE:FF""#),
        .rig(
            "zero max velocity",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "maxVelocity": 0}
              ]
            }
            """, "r.json:3:50: error: $.axes[0].maxVelocity: 0 °/s is out of range; valid: 0.1…10000 °/s"),
    ]

    static let limits: [BadFile] = [
        .rig(
            "soft limits beyond the default calibration",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "softLimits": [-100, 45]}
              ]
            }
            """, "r.json:3:49: error: $.axes[0].softLimits: soft limits [-100, 45] leave the calibrated angle range -90…90°"),
        .rig(
            "soft limits beyond angleDeg",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "angleDeg": [-60, 60], "softLimits": [-70, 0]}
              ]
            }
            """, "r.json:3:72: error: $.axes[0].softLimits: soft limits [-70, 0] leave the calibrated angle range -60…60°"),
        .rig(
            "soft limits reversed",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "softLimits": [30, 10]}
              ]
            }
            """, "r.json:3:49: error: $.axes[0].softLimits: soft limits [30, 10] must be [min, max] with min < max"),
        .rig(
            "pwm soft limits beyond 100 %",
            """
            {
              "axes": [
                {"name": "led", "kind": "pwm", "channel": 0, "softLimits": [0, 120]}
              ]
            }
            """, "r.json:3:64: error: $.axes[0].softLimits: soft limits [0, 120] leave the duty-cycle range 0…100%"),
        .rig(
            "home outside soft limits",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "softLimits": [-45, 45], "home": 50}
              ]
            }
            """, "r.json:3:68: error: $.axes[0].home: 50° is outside the soft limits; valid: -45…45°"),
        .rig(
            "duplicate axis name",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0},
                {"name": "pan", "channel": 1}
              ]
            }
            """, #"r.json:4:14: error: $.axes[1].name: axis name "pan" is used twice; axis names must be unique"#),
        .rig(
            "duplicate channel",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0},
                {"name": "tilt", "channel": 0}
              ]
            }
            """, #"r.json:4:33: error: $.axes[1].channel: channel 0 is already used by axis "pan"; each axis needs its own channel"#),
        .rig(
            "non-monotonic calibration",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "calibration": [[-90, 1000], [0, 1600], [90, 1400]]}
              ]
            }
            """, "r.json:3:50: error: $.axes[0].calibration: pulse widths must rise (or fall) strictly with the angle"),
        .rig(
            "calibration pulse out of range",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "calibration": [[-90, 1000], [90, 5000]]}
              ]
            }
            """, "r.json:3:64: error: $.axes[0].calibration[1]: pulse 5000 µs is out of range; valid: 200…3000 µs ([angle, pulse] pairs)"),
        .rig(
            "calibration and pulseUs together",
            """
            {
              "axes": [
                {"name": "pan", "channel": 0, "calibration": [[-90, 1000], [90, 2000]], "pulseUs": [1000, 2000]}
              ]
            }
            """, #"r.json:3:50: error: $.axes[0].calibration: give either "calibration" or "pulseUs"/"angleDeg", not both"#),
        .rig(
            "pwm axis with a pulse calibration",
            """
            {
              "axes": [
                {"name": "led", "kind": "pwm", "channel": 0, "pulseUs": [1000, 2000]}
              ]
            }
            """, #"r.json:3:50: error: $.axes[0].pulseUs: a pwm axis has no pulse calibration; remove "pulseUs" or set "kind": "servo""#),
        .rig(
            "pwm axis inverted",
            """
            {
              "axes": [
                {"name": "led", "kind": "pwm", "channel": 0, "inverted": true}
              ]
            }
            """, #"r.json:3:62: error: $.axes[0].inverted: "inverted" is for servo axes; a pwm axis's position is its duty cycle"#),
    ]

    static let keyframes: [BadFile] = [
        .program(
            "keys out of order",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0}, {"t": 2, "value": 5}, {"t": 1, "value": 3}]
              }
            }
            """, "p.json:5:63: error: $.keyframes.pan[2].t: t 1 does not come after the previous key's 2; keys must be in increasing time order"),
        .program(
            "unknown interpolation",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0, "interp": "cubic"}, {"t": 2, "value": 5}]
              }
            }
            """,
            #"p.json:5:44: error: $.keyframes.pan[0].interp: "cubic" is not valid; valid: "hold", "linear", "smooth", "bezier", "easeInSine", "easeInQuad", "easeInCubic", "easeOutSine", "easeOutQuad", "easeOutCubic", "easeInOutSine", "easeInOutQuad", "easeInOutCubic""#
        ),
        .program(
            "bezier x handle outside 0…1",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0, "interp": "bezier", "bezier": [1.2, 0, 0.5, 1]}, {"t": 2, "value": 5}]
              }
            }
            """, "p.json:5:64: error: $.keyframes.pan[0].bezier: bezier x handles must lie in 0…1 (time cannot run backwards); found x1 = 1.2, x2 = 0.5"),
        .program(
            "bezier handles without interp",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0, "bezier": [0.2, 0, 0.5, 1]}, {"t": 2, "value": 5}]
              }
            }
            """, #"p.json:5:44: error: $.keyframes.pan[0].bezier: "bezier" handles need "interp": "bezier""#),
        .program(
            "interp bezier without handles",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "pan": [{"t": 0, "value": 0, "interp": "bezier"}, {"t": 2, "value": 5}]
              }
            }
            """, #"p.json:5:13: error: $.keyframes.pan[0]: missing required key "bezier" ([x1, y1, x2, y2] handles for "interp": "bezier")"#),
        .program(
            "unknown axis in keyframes",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {
                "tilt": [{"t": 0, "value": 0}]
              }
            }
            """, #"p.json:5:5: error: $.keyframes.tilt: the rig has no axis "tilt"; its axes: "pan""#),
        .program(
            "no keyframes at all",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "keyframes": {}
            }
            """, #"p.json:4:16: error: $.keyframes: no axis has keys; give at least one axis, e.g. "pan": [{"t": 0, "value": 0}]"#),
        .program(
            "steps section in a keyframes program",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "steps": [{"pose": {"pan": 0}}],
              "keyframes": {"pan": [{"t": 0, "value": 0}]}
            }
            """, #"p.json:4:3: error: $.steps: a "keyframes" program has no "steps" section; use "keyframes" or set "kind": "steps""#),
        .program(
            "trigger on a keyframes program",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "trigger": "auto",
              "keyframes": {"pan": [{"t": 0, "value": 0}]}
            }
            """,
            "p.json:4:14: error: $.trigger: a keyframes program runs continuously and takes no trigger; triggers are for steps, panorama and timelapse programs"
        ),
        .program(
            "settle time on a keyframes program",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "keyframes",
              "settleSeconds": 1,
              "keyframes": {"pan": [{"t": 0, "value": 0}]}
            }
            """, "p.json:4:20: error: $.settleSeconds: a keyframes program does not stop to settle; settleSeconds is for stepped programs"),
    ]

    static let stepped: [BadFile] = [
        .program(
            "invalid trigger",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "steps",
              "trigger": "interval:0",
              "steps": [{"pose": {"pan": 10}}]
            }
            """, "p.json:4:14: error: $.trigger: interval 0 s is out of range; valid: interval:SECONDS with SECONDS in 0.01…86400"),
        .program(
            "unknown axis in a pose",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "steps",
              "steps": [{"pose": {"tilt": 10}}]
            }
            """, #"p.json:4:23: error: $.steps[0].pose.tilt: the rig has no axis "tilt"; its axes: "pan""#),
        .program(
            "empty pose",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "steps",
              "steps": [{"pose": {}}]
            }
            """, "p.json:4:22: error: $.steps[0].pose: an empty pose; name at least one axis"),
        .program(
            "no steps", #"{"rig": {"axes": [{"name": "pan", "channel": 0}]}, "kind": "steps", "steps": []}"#,
            "p.json:1:78: error: $.steps: must not be empty"),
        .program(
            "unknown kind",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "sequence"
            }
            """, #"p.json:3:11: error: $.kind: "sequence" is not valid; valid: "keyframes", "steps", "panorama", "timelapse", "track""#),
        .program(
            "timelapse key past the last frame",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "timelapse",
              "timelapse": {
                "frames": 100,
                "keyframes": {"pan": [{"frame": 0, "value": 0}, {"frame": 120, "value": 30}]}
              }
            }
            """,
            #"p.json:6:63: error: $.timelapse.keyframes.pan[1].frame: frame 120 is past the last frame 99 ("frames": 100 counts from 0); raise "frames" or move the key"#
        ),
        .program(
            "timelapse key by time without an interval",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}]},
              "kind": "timelapse",
              "timelapse": {
                "frames": 100,
                "keyframes": {"pan": [{"t": 0, "value": 0}]}
              }
            }
            """,
            #"p.json:6:33: error: $.timelapse.keyframes.pan[0].t: a timelapse key by time ("t") needs the frames' times: give "trigger": "interval:SECONDS""#),
        .program(
            "panorama without a lens",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]},
              "kind": "panorama",
              "panorama": {"pan": [-90, 90], "tilt": [0, 30]}
            }
            """,
            #"p.json:4:15: error: $.panorama: missing required key "lens" (a preset such as "fullframe-24mm", {"preset"}, {"focalLengthMm", "sensorWidthMm", "sensorHeightMm"} or {"horizontalFovDeg", "verticalFovDeg"})"#
        ),
        .program(
            "panorama lens without a focal length or fov",
            """
            {
              "rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]},
              "kind": "panorama",
              "panorama": {"lens": {}, "pan": [-90, 90], "tilt": [0, 30]}
            }
            """,
            #"p.json:4:24: error: $.panorama.lens: give a "preset" (SENSOR-FOCALmm, SENSOR one of fullframe, aps-c, aps-c-canon, mft, 1-inch (e.g. "fullframe-24mm", "aps-c-18mm")), "focalLengthMm" (with "sensorWidthMm"/"sensorHeightMm", default full frame 36×24) or "horizontalFovDeg" and "verticalFovDeg""#
        ),
    ]

    static let rigs: [BadFile] = [
        .program(
            "rig file missing",
            """
            {
              "rig": "rigs/none.json",
              "kind": "steps",
              "steps": [{"pose": {"pan": 0}}]
            }
            """, #"p.json:2:10: error: $.rig: cannot read rig file "rigs/none.json": no such file"#),
        // An error in the rig a program names is reported in the rig's own file.
        .program(
            "error inside the named rig file",
            """
            {
              "rig": "rigs/bench.json",
              "kind": "steps",
              "steps": [{"pose": {"pan": 0}}]
            }
            """, "rigs/bench.json:1:38: error: $.axes[0].channel: channel 99 does not exist on a sim output; valid: 0…15"),
        .program("no rig", #"{"kind": "steps", "steps": []}"#, #"p.json:1:1: error: $: missing required key "rig" (a path to a rig file, or a rig object)"#),
        .program("rig as a number", #"{"rig": 5}"#, "p.json:1:9: error: $.rig: expected a path to a rig file or a rig object, found a number"),
    ]

    static var all: [BadFile] { syntax + types + unknownKeys + ranges + limits + keyframes + stepped + rigs }

    @Test(arguments: all) func reportsTheExactLine(_ file: BadFile) {
        #expect(errorLine(file) == file.expected)
    }

    @Test func thereAreManyDistinctCases() {
        #expect(Set(Self.all.map(\.text)).count >= 30)
        #expect(Set(Self.all.map(\.expected)).count == Self.all.count)
    }

    @Test func validDocumentsParse() throws {
        let bom = "\u{FEFF}{\"axes\": [{\"name\": \"pan\", \"channel\": 0}]}"
        #expect(try RigParser.parse(text: bom, file: "r.json").axes.map(\.name) == ["pan"])
        let withSchema = #"{"$schema": "../schema/rig.schema.json", "description": "desk rig", "axes": [{"name": "pan", "channel": 0}]}"#
        #expect(try RigParser.parse(text: withSchema, file: "r.json").name == "rig")
        let escaped = #"{"name": "b\u00e9nch \"2\" \ud83d\ude00", "axes": [{"name": "pan", "channel": 0}]}"#
        #expect(try RigParser.parse(text: escaped, file: "r.json").name == "bénch \"2\" 😀")
    }

    @Test func columnsCountCharactersNotBytes() {
        // "é" is two bytes in UTF-8 but one column.
        let text = #"{"name": "é", "loopRateHz": 5, "axes": [{"name": "pan", "channel": 0}]}"#
        // {"name": "é", → 13 characters; space; "loopRateHz" 15–26; ':' 27; space; 5 at 29.
        #expect(errorLine(.rig("", text, "")) == "r.json:1:29: error: $.loopRateHz: 5 Hz is out of range; valid: 20…500 Hz")
    }
}

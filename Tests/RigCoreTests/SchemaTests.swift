import Foundation
import Testing

@testable import RigCore
@testable import RigFormat

/// `schema/rig.schema.json` and `schema/program.schema.json` must describe what the parsers
/// accept: the same keys in every object, and the same verdict on valid and invalid files.
@Suite struct SchemaTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relativePath), encoding: .utf8)
    }

    static func validator() throws -> MiniSchemaValidator {
        var documents: [String: JSONNode] = [:]
        for name in ["rig.schema.json", "program.schema.json"] {
            documents[name] = try JSONParser.parse(try text("schema/\(name)"))
        }
        return MiniSchemaValidator(documents: documents)
    }

    /// Which schema a document follows: programs have a "kind".
    static func schemaName(for root: JSONNode) -> String {
        if case .object(let members) = root.value, members.contains(where: { $0.key == "kind" }) { return "program.schema.json" }
        return "rig.schema.json"
    }

    @Test func schemasAreDraft2020_12AndParseWithTheCoreParser() throws {
        let v = try Self.validator()
        for (_, root) in v.documents {
            guard case .object(let members) = root.value else {
                Issue.record("schema root is not an object")
                continue
            }
            let schema = members.first { $0.key == "$schema" }?.value.value
            #expect(schema == .string("https://json-schema.org/draft/2020-12/schema"))
        }
    }

    @Test func examplesInRigsFolderPassParserAndSchema() throws {
        let folder = Self.repository.appendingPathComponent("rigs")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".json") }.sorted() ?? []
        let v = try Self.validator()
        for name in names {
            let text = try Self.text("rigs/\(name)")
            let root = try JSONParser.parse(text)
            let schema = Self.schemaName(for: root)
            #expect(v.errors(root, document: schema) == [], "rigs/\(name)")
            do {
                if schema == "rig.schema.json" {
                    _ = try RigParser.parse(text: text, file: name)
                } else {
                    _ = try ProgramParser.parse(text: text, file: name) { path, at throws(FileError) in
                        guard let rigText = try? Self.text("rigs/\(path)") else { throw at.error("cannot read \(path)") }
                        return (rigText, path)
                    }
                }
            } catch {
                Issue.record("rigs/\(name): \(error)")
            }
        }
    }

    /// Valid documents that between them use every key the schemas list.
    static let valid: [String] = [
        #"""
        {"$schema": "../schema/rig.schema.json", "description": "everything on a pca9685", "name": "bench", "loopRateHz": 200,
         "output": {"type": "pca9685", "bus": "/dev/i2c-0", "address": "0x41", "frequencyHz": 60, "oscillatorHz": 25500000, "phaseStagger": true},
         "axes": [
           {"name": "pan", "kind": "servo", "channel": 0, "inverted": true, "pulseUs": [600, 2400], "angleDeg": [-80, 80],
            "softLimits": [-70, 70], "home": 5, "park": -10, "maxVelocity": 120, "maxAcceleration": 300, "idle": "release"},
           {"name": "tilt-2", "channel": 1, "calibration": [[-45, 1100], [0, 1500], [45, 1950]]},
           {"name": "led_1", "kind": "pwm", "channel": 15, "inverted": false, "softLimits": [10, 90], "home": 20, "idle": "hold"}
         ]}
        """#,
        #"{"output": {"type": "pca9685", "address": 64}, "axes": [{"name": "pan", "channel": 0}]}"#,
        #"""
        {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}],
         "jog": {"deadzone": 0.1, "expo": 0.3, "axisSnapDeg": 10, "fineSpeed": 0.05, "normalSpeed": 0.3, "coarseSpeed": 0.9,
                 "nudgeStep": 1, "watchdogMs": 400, "spacingSeconds": 1.5,
                 "sticks": {"leftx": "tilt", "lefty": {"axis": "pan", "inverted": false}, "rightx": null},
                 "buttons": {"a": "record", "b": null, "guide": "quit", "leftstick": "none"},
                 "sdlMapping": "030000005e0400008e02000014010000,Xbox 360 Controller,a:b0,b:b1,leftx:a0,lefty:a1,platform:Linux,"}}
        """#,
        #"""
        {"output": {"type": "blecontrol", "address": "aa:bb:cc:dd:ee:ff", "name": "BLEControl", "adapter": "hci1",
                    "linkBytesPerSecond": 900, "maxWriteBytes": 20},
         "axes": [{"name": "pan", "channel": 7}]}
        """#,
        #"{"output": {"type": "sim", "servoSpeedDegPerS": 300, "frequencyHz": 200}, "axes": [{"name": "pan", "channel": 0}]}"#,
        #"{"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}], "dfmoco": {"motors": ["tilt", "pan"], "stepsPerDegree": 50}}"#,
        #"""
        {"axes": [{"name": "pan", "channel": 0, "backlashDeg": 0.8}],
         "camera": {"type": "gpio", "chip": "gpiochip1", "shutterLine": 5, "focusLine": null, "activeLow": true,
                    "focusMs": 300, "shutterMs": 100, "afterShotMs": 2000}}
        """#,
        #"{"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "focusMs": 0}}"#,
        #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim"}}, "kind": "steps", "trigger": "interval:4",
         "shoot": {"exposureSeconds": 2.5, "bulb": true, "shotsPerStep": 3}, "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": -10}}]}
        """#,
        #"""
        {"$schema": "../schema/program.schema.json", "description": "every interpolation",
         "rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]},
         "kind": "keyframes",
         "keyframes": {
           "pan": [{"t": 0, "value": 0, "interp": "linear"}, {"t": 1, "value": 5, "interp": "hold"}, {"t": 2, "value": 5, "interp": "smooth"},
                   {"t": 3, "value": 10, "interp": "bezier", "bezier": [0.3, -0.4, 0.7, 1.4]}, {"t": 5, "value": 0, "interp": "easeInOutSine"},
                   {"t": 7, "value": 3}],
           "tilt": [{"t": 0.5, "value": -5, "interp": "easeOutCubic"}, {"t": 4, "value": 0}]
         }}
        """#,
        #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}]}, "kind": "steps", "trigger": "interval:2.5", "settleSeconds": 0.25,
         "stopRecipeAtEnd": true, "steps": [{"pose": {"pan": 10}, "settleSeconds": 1, "label": "left"}, {"pose": {"pan": -10}}]}
        """#,
        #"""
        {"rig": {"axes": [{"name": "p", "channel": 0}, {"name": "t", "channel": 1}]}, "kind": "panorama", "trigger": "bui",
         "panorama": {"panAxis": "p", "tiltAxis": "t", "lens": {"focalLengthMm": 24, "sensorWidthMm": 23.5, "sensorHeightMm": 15.6, "orientation": "portrait"},
                      "overlapPercent": 40, "pan": [-60, 60], "tilt": [0, 30]}}
        """#,
        #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]}, "kind": "panorama", "trigger": "gpio",
         "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40, "orientation": "landscape"}, "pan": [0, 360], "tilt": [0, 0]}}
        """#,
        #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}]}, "kind": "timelapse", "trigger": "auto",
         "timelapse": {"frames": 10, "keyframes": {"pan": [{"frame": 0, "value": 0, "interp": "bezier", "bezier": [0.4, 0, 0.6, 1]}, {"frame": 9, "value": 20}]}}}
        """#,
    ]

    @Test(arguments: valid) func validDocumentsPassParserAndSchema(_ text: String) throws {
        let root = try JSONParser.parse(text)
        let schema = Self.schemaName(for: root)
        #expect(try Self.validator().errors(root, document: schema) == [])
        if schema == "rig.schema.json" {
            #expect(throws: Never.self) { try RigParser.parse(text: text, file: "r.json") }
        } else {
            #expect(throws: Never.self) { try parseProgram(text) }
        }
    }

    /// Files from `FileErrorTests` that the schema can judge (not syntax errors, nor rules that
    /// need arithmetic across values, such as soft limits against the calibration).
    static let schemaDetectable: Set<String> = [
        "misspelt axis key", "misspelt root key", "misspelt output key", "unknown output type", "misspelt program key",
        "unknown keyframe key", "loop rate too high", "pca9685 channel 16", "pca9685 frequency", "I2C address not hex",
        "BLE address too short", "zero max velocity", "pwm axis with a pulse calibration", "pwm axis inverted",
        "calibration and pulseUs together", "calibration pulse out of range", "unknown interpolation",
        "bezier x handle outside 0…1", "bezier handles without interp", "interp bezier without handles", "no keyframes at all",
        "steps section in a keyframes program", "trigger on a keyframes program", "settle time on a keyframes program",
        "invalid trigger", "empty pose", "no steps", "unknown kind",
        "panorama without a lens", "panorama lens without a focal length or fov", "no rig", "rig as a number",
        "channel as a string", "channel not whole", "name as a number", "axes as an object", "no axes",
        "soft limits with one number", "missing channel", "axis name with a space", "blecontrol channel 8",
        "pwm soft limits beyond 100 %",
    ]

    @Test func invalidDocumentsFailTheSchemaToo() throws {
        let v = try Self.validator()
        let cases = FileErrorTests.all.filter { Self.schemaDetectable.contains($0.name) }
        #expect(cases.count == Self.schemaDetectable.count, "every named case exists")
        for file in cases {
            let root = try JSONParser.parse(file.text)
            #expect(errorLine(file) != "no error")
            #expect(!v.errors(root, document: file.kind == .rig ? "rig.schema.json" : "program.schema.json").isEmpty, "\(file.name)")
        }
    }

    // MARK: Same keys

    /// The keys the parser accepts in one object: from its "unknown key" message.
    static func parserKeys(_ text: String, kind: BadFile.Kind) -> Set<String> {
        let line = errorLine(BadFile(name: "", kind: kind, text: text, expected: ""))
        guard let range = line.range(of: "valid keys here: ") else { return ["<no unknown-key error: \(line)>"] }
        return Set(line[range.upperBound...].split(separator: ", ").map { String($0.dropFirst().dropLast()) })
    }

    /// The keys the schema allows in `instance` at `pointer`: its properties, minus those a
    /// matching if/then forbids; for oneOf, the branch the instance matches.
    static func schemaKeys(_ v: MiniSchemaValidator, document: String, pointer: String, instance: String) throws -> Set<String> {
        var node = v.documents[document]?.value ?? .null
        for part in pointer.split(separator: "/") { node = member(node, String(part)) ?? .null }
        return try allowedKeys(v, schema: node, document: document, instance: JSONParser.parse(instance).value)
    }

    static func allowedKeys(_ v: MiniSchemaValidator, schema: JSONValue, document: String, instance: JSONValue) -> Set<String> {
        var schema = schema
        if case .string(let refString)? = member(schema, "$ref"), case let ref = refString.text, ref.hasPrefix("#/") {
            var node = v.documents[document]?.value ?? .null
            for part in ref.dropFirst(2).split(separator: "/") { node = member(node, String(part)) ?? .null }
            schema = node
        }
        if case .array(let branches)? = member(schema, "oneOf") {
            for branch in branches where passes(v, instance, branch.value, document) {
                return allowedKeys(v, schema: branch.value, document: document, instance: instance)
            }
            return []
        }
        guard case .object(let properties)? = member(schema, "properties") else { return [] }
        var keys = Set(properties.map(\.key))
        if case .array(let rules)? = member(schema, "allOf") {
            for rule in rules {
                guard let condition = member(rule.value, "if"), passes(v, instance, condition, document),
                    case .object(let forbidden)? = member(member(rule.value, "then") ?? .null, "properties")
                else { continue }
                for f in forbidden where f.value.value == .bool(false) { keys.remove(f.key) }
            }
        }
        return keys
    }

    static func passes(_ v: MiniSchemaValidator, _ instance: JSONValue, _ schema: JSONValue, _ document: String) -> Bool {
        var errors: [String] = []
        v.validate(instance, schema, document: document, path: "$", into: &errors)
        return errors.isEmpty
    }

    static func member(_ value: JSONValue, _ key: String) -> JSONValue? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value.value
    }

    struct Place: Sendable, CustomTestStringConvertible {
        var name: String
        var document: String
        var pointer: String
        /// A valid instance of the object (for picking the if/then and oneOf branches).
        var instance: String
        /// A whole file with that object plus an unknown key "zzzz".
        var probe: String
        var testDescription: String { name }
    }

    static let axes = #"[{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]"#
    static func program(_ rest: String) -> String { #"{"rig": {"axes": \#(axes)}, \#(rest)}"# }

    static let places: [Place] = [
        Place(name: "rig", document: "rig.schema.json", pointer: "", instance: #"{"axes": \#(axes)}"#, probe: #"{"zzzz": 0, "axes": \#(axes)}"#),
        Place(
            name: "servo axis", document: "rig.schema.json", pointer: "$defs/axis", instance: #"{"name": "pan", "channel": 0}"#,
            probe: #"{"axes": [{"name": "pan", "channel": 0, "zzzz": 0}]}"#),
        Place(
            name: "servo axis with a calibration table", document: "rig.schema.json", pointer: "$defs/axis",
            instance: #"{"name": "pan", "channel": 0, "calibration": [[-90, 1000], [90, 2000]]}"#,
            probe: #"{"axes": [{"name": "pan", "channel": 0, "calibration": [[-90, 1000], [90, 2000]], "zzzz": 0}]}"#),
        Place(
            name: "pwm axis", document: "rig.schema.json", pointer: "$defs/axis", instance: #"{"name": "l", "kind": "pwm", "channel": 0}"#,
            probe: #"{"axes": [{"name": "l", "kind": "pwm", "channel": 0, "zzzz": 0}]}"#),
        Place(
            name: "jog", document: "rig.schema.json", pointer: "$defs/jog", instance: "{}",
            probe: #"{"axes": \#(axes), "jog": {"zzzz": 0}}"#),
        Place(
            name: "jog sticks", document: "rig.schema.json", pointer: "$defs/jog/properties/sticks", instance: "{}",
            probe: #"{"axes": \#(axes), "jog": {"sticks": {"zzzz": 0}}}"#),
        Place(
            name: "jog stick as an object", document: "rig.schema.json", pointer: "$defs/jogStick", instance: #"{"axis": "pan"}"#,
            probe: #"{"axes": \#(axes), "jog": {"sticks": {"leftx": {"axis": "pan", "zzzz": 0}}}}"#),
        Place(
            name: "jog buttons", document: "rig.schema.json", pointer: "$defs/jog/properties/buttons", instance: "{}",
            probe: #"{"axes": \#(axes), "jog": {"buttons": {"zzzz": 0}}}"#),
        Place(
            name: "stepSync", document: "rig.schema.json", pointer: "$defs/stepSync", instance: "{}",
            probe: #"{"axes": \#(axes), "stepSync": {"zzzz": 0}}"#),
        Place(
            name: "buttons", document: "rig.schema.json", pointer: "$defs/buttons", instance: "{}",
            probe: #"{"axes": \#(axes), "buttons": {"zzzz": 0}}"#),
        Place(
            name: "dfmoco", document: "rig.schema.json", pointer: "$defs/dfmoco", instance: "{}",
            probe: #"{"axes": \#(axes), "dfmoco": {"zzzz": 0}}"#),
        Place(
            name: "track program", document: "program.schema.json", pointer: "",
            instance: program(#""kind": "track", "track": {"target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 60}"#),
            probe: program(
                #""kind": "track", "zzzz": 0, "site": {"latitude": 28.76, "longitude": -17.88}, "track": {"target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 60}"#
            )),
        Place(
            name: "track section", document: "program.schema.json", pointer: "$defs/track",
            instance: #"{"target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 60}"#,
            probe: program(
                #""kind": "track", "site": {"latitude": 28.76, "longitude": -17.88}, "track": {"zzzz": 0, "target": "sun", "start": "2026-07-15T10:00:00Z", "durationSeconds": 60}"#
            )),
        Place(
            name: "site", document: "rig.schema.json", pointer: "$defs/site", instance: #"{"latitude": 0, "longitude": 0}"#,
            probe: #"{"axes": \#(axes), "site": {"latitude": 0, "longitude": 0, "zzzz": 0}}"#),
        Place(
            name: "ramp", document: "program.schema.json", pointer: "$defs/ramp", instance: #"{"mode": "auto", "startEV": 12}"#,
            probe: program(#""kind": "steps", "shoot": {"ramp": {"mode": "auto", "startEV": 12, "zzzz": 0}}, "steps": [{"pose": {"pan": 0}}]"#)),
        // The camera sections are read by their backends, outside RigCore: CameraSectionTests
        // (RigCLITests) compares their keys with the schema through `rig check`.
        Place(
            name: "exposure", document: "program.schema.json", pointer: "$defs/exposure", instance: #"{"ev": 0}"#,
            probe: program(#""kind": "steps", "shoot": {"exposure": {"ev": 0, "zzzz": 0}}, "steps": [{"pose": {"pan": 0}}]"#)),
        Place(
            name: "bracket", document: "program.schema.json", pointer: "properties/shoot/properties/bracket", instance: #"{"count": 3, "stepEV": 1}"#,
            probe: program(#""kind": "steps", "shoot": {"bracket": {"count": 3, "stepEV": 1, "zzzz": 0}}, "steps": [{"pose": {"pan": 0}}]"#)),
        Place(
            name: "shoot", document: "program.schema.json", pointer: "properties/shoot", instance: "{}",
            probe: program(#""kind": "steps", "shoot": {"zzzz": 0}, "steps": [{"pose": {"pan": 0}}]"#)),
        Place(
            name: "sim output", document: "rig.schema.json", pointer: "$defs/output", instance: #"{"type": "sim"}"#,
            probe: #"{"output": {"type": "sim", "zzzz": 0}, "axes": \#(axes)}"#),
        Place(
            name: "pca9685 output", document: "rig.schema.json", pointer: "$defs/output", instance: #"{"type": "pca9685"}"#,
            probe: #"{"output": {"type": "pca9685", "zzzz": 0}, "axes": \#(axes)}"#),
        Place(
            name: "blecontrol output", document: "rig.schema.json", pointer: "$defs/output", instance: #"{"type": "blecontrol"}"#,
            probe: #"{"output": {"type": "blecontrol", "zzzz": 0}, "axes": \#(axes)}"#),
        Place(
            name: "keyframes program", document: "program.schema.json", pointer: "",
            instance: program(#""kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}]}"#),
            probe: program(#""kind": "keyframes", "zzzz": 0, "keyframes": {"pan": [{"t": 0, "value": 0}]}"#)),
        Place(
            name: "steps program", document: "program.schema.json", pointer: "",
            instance: program(#""kind": "steps", "steps": [{"pose": {"pan": 0}}]"#),
            probe: program(#""kind": "steps", "zzzz": 0, "steps": [{"pose": {"pan": 0}}]"#)),
        Place(
            name: "panorama program", document: "program.schema.json", pointer: "",
            instance: program(#""kind": "panorama", "panorama": {"lens": {"focalLengthMm": 50}, "pan": [0, 10], "tilt": [0, 0]}"#),
            probe: program(#""kind": "panorama", "zzzz": 0, "panorama": {"lens": {"focalLengthMm": 50}, "pan": [0, 10], "tilt": [0, 0]}"#)),
        Place(
            name: "timelapse program", document: "program.schema.json", pointer: "",
            instance: program(#""kind": "timelapse", "timelapse": {"frames": 2, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}"#),
            probe: program(#""kind": "timelapse", "zzzz": 0, "timelapse": {"frames": 2, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}"#)),
        Place(
            name: "keyframe", document: "program.schema.json", pointer: "$defs/keyframe", instance: #"{"t": 0, "value": 0}"#,
            probe: program(#""kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0, "zzzz": 0}]}"#)),
        Place(
            name: "timelapse keyframe", document: "program.schema.json", pointer: "$defs/frameKeyframe", instance: #"{"frame": 0, "value": 0}"#,
            probe: program(#""kind": "timelapse", "timelapse": {"frames": 2, "keyframes": {"pan": [{"frame": 0, "value": 0, "zzzz": 0}]}}"#)),
        Place(
            name: "timelapse section", document: "program.schema.json", pointer: "$defs/timelapse",
            instance: #"{"frames": 2, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}"#,
            probe: program(#""kind": "timelapse", "timelapse": {"frames": 2, "zzzz": 0, "keyframes": {"pan": [{"frame": 0, "value": 0}]}}"#)),
        Place(
            name: "step", document: "program.schema.json", pointer: "$defs/step", instance: #"{"pose": {"pan": 0}}"#,
            probe: program(#""kind": "steps", "steps": [{"pose": {"pan": 0}, "zzzz": 0}]"#)),
        Place(
            name: "panorama section", document: "program.schema.json", pointer: "$defs/panorama",
            instance: #"{"lens": {"focalLengthMm": 50}, "pan": [0, 10], "tilt": [0, 0]}"#,
            probe: program(#""kind": "panorama", "panorama": {"zzzz": 0, "lens": {"focalLengthMm": 50}, "pan": [0, 10], "tilt": [0, 0]}"#)),
        Place(
            name: "lens by focal length", document: "program.schema.json", pointer: "$defs/panorama/properties/lens",
            instance: #"{"focalLengthMm": 50}"#,
            probe: program(#""kind": "panorama", "panorama": {"lens": {"focalLengthMm": 50, "zzzz": 0}, "pan": [0, 10], "tilt": [0, 0]}"#)),
        Place(
            name: "lens by field of view", document: "program.schema.json", pointer: "$defs/panorama/properties/lens",
            instance: #"{"horizontalFovDeg": 50, "verticalFovDeg": 30}"#,
            probe: program(
                #""kind": "panorama", "panorama": {"lens": {"horizontalFovDeg": 50, "verticalFovDeg": 30, "zzzz": 0}, "pan": [0, 10], "tilt": [0, 0]}"#)),
    ]

    @Test(arguments: places) func schemaAndParserAllowTheSameKeys(_ place: Place) throws {
        let v = try Self.validator()
        let schema = try Self.schemaKeys(v, document: place.document, pointer: place.pointer, instance: place.instance)
        let kind: BadFile.Kind = place.document == "rig.schema.json" ? .rig : .program
        let parser = Self.parserKeys(place.probe, kind: kind)
        #expect(!schema.isEmpty)
        #expect(schema == parser, "only in schema: \(schema.subtracting(parser).sorted()), only in parser: \(parser.subtracting(schema).sorted())")
    }
}

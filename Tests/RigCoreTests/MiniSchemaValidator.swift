@testable import RigCore
@testable import RigFormat

/// Just enough JSON Schema 2020-12 to check `schema/*.json` against documents: the keywords
/// those files use. A keyword it does not know is reported as an error, so the schemas cannot
/// quietly start relying on something this validator ignores.
struct MiniSchemaValidator {
    /// Schema documents by file name ("rig.schema.json"), parsed with the core's JSONParser.
    let documents: [String: JSONNode]

    static let annotations: Set<String> = ["$schema", "$id", "$defs", "title", "description", "default"]

    func errors(_ instance: JSONNode, document: String) -> [String] {
        guard let root = documents[document] else { return ["no schema \(document)"] }
        var errors: [String] = []
        validate(instance.value, root.value, document: document, path: "$", into: &errors)
        return errors
    }

    func validate(_ value: JSONValue, _ schema: JSONValue, document: String, path: String, into errors: inout [String]) {
        switch schema {
        case .bool(true): return
        case .bool(false):
            errors.append("\(path): not allowed here")
            return
        case .object(let keywords):
            var k: [String: JSONValue] = [:]
            for m in keywords { k[m.key] = m.value.value }
            check(value, k, document: document, path: path, into: &errors)
        default: errors.append("\(path): schema is not an object or boolean")
        }
    }

    // swiftlint:disable:next cyclomatic_complexity
    private func check(_ value: JSONValue, _ k: [String: JSONValue], document: String, path: String, into errors: inout [String]) {
        for key in k.keys where !Self.annotations.contains(key) && !Self.known.contains(key) {
            errors.append("\(path): validator does not support \"\(key)\"")
        }
        if case .string(let refString)? = k["$ref"] {
            let ref = refString.text
            if ref.hasPrefix("#/") {
                var node = documents[document]?.value ?? .null
                for part in ref.dropFirst(2).split(separator: "/") { node = member(node, String(part)) ?? .null }
                validate(value, node, document: document, path: path, into: &errors)
            } else if let other = documents[ref] {
                validate(value, other.value, document: ref, path: path, into: &errors)
            } else {
                errors.append("\(path): unresolved $ref \(ref)")
            }
        }
        if case .string(let type)? = k["type"], !isType(value, type.text) {
            errors.append("\(path): expected \(type), found \(value.kindName)")
            return
        }
        if case .array(let choices)? = k["enum"], !choices.contains(where: { same($0.value, value) }) {
            errors.append("\(path): not one of the enum values")
        }
        if let constant = k["const"], !same(constant, value) { errors.append("\(path): not the constant") }
        if case .number(let x) = value {
            if case .number(let m)? = k["minimum"], x < m { errors.append("\(path): below minimum \(m)") }
            if case .number(let m)? = k["maximum"], x > m { errors.append("\(path): above maximum \(m)") }
            if case .number(let m)? = k["exclusiveMinimum"], x <= m { errors.append("\(path): not above \(m)") }
        }
        if case .string(let string) = value {
            let s = string.text
            if case .number(let m)? = k["minLength"], Double(s.count) < m { errors.append("\(path): shorter than \(m)") }
            if case .string(let patternString)? = k["pattern"] {
                let pattern = patternString.text
                do {
                    if try Regex(pattern).firstMatch(in: s) == nil { errors.append("\(path): \"\(s)\" does not match \(pattern)") }
                } catch {
                    errors.append("\(path): bad pattern \(pattern)")
                }
            }
        }
        if case .array(let items) = value {
            if case .number(let m)? = k["minItems"], Double(items.count) < m { errors.append("\(path): fewer than \(m) items") }
            if case .number(let m)? = k["maxItems"], Double(items.count) > m { errors.append("\(path): more than \(m) items") }
            var prefix = 0
            if case .array(let schemas)? = k["prefixItems"] {
                prefix = schemas.count
                for (i, s) in schemas.enumerated() where i < items.count {
                    validate(items[i].value, s.value, document: document, path: "\(path)[\(i)]", into: &errors)
                }
            }
            if let itemSchema = k["items"] {
                for i in items.indices where i >= prefix {
                    validate(items[i].value, itemSchema, document: document, path: "\(path)[\(i)]", into: &errors)
                }
            }
        }
        if case .object(let members) = value {
            let keys = members.map(\.key)
            if case .array(let required)? = k["required"] {
                for r in required { if case .string(let name) = r.value, !keys.contains(name.text) { errors.append("\(path): missing \(name)") } }
            }
            if case .number(let m)? = k["minProperties"], Double(members.count) < m { errors.append("\(path): fewer than \(m) members") }
            if case .object(let deps)? = k["dependentRequired"] {
                for dep in deps where keys.contains(dep.key) {
                    if case .array(let needed) = dep.value.value {
                        for n in needed {
                            if case .string(let name) = n.value, !keys.contains(name.text) { errors.append("\(path): \(dep.key) needs \(name)") }
                        }
                    }
                }
            }
            var properties: [String: JSONValue] = [:]
            if case .object(let props)? = k["properties"] { for p in props { properties[p.key] = p.value.value } }
            for m in members {
                let childPath = "\(path).\(m.key)"
                if let names = k["propertyNames"] { validate(.string(m.name), names, document: document, path: childPath, into: &errors) }
                if let s = properties[m.key] {
                    validate(m.value.value, s, document: document, path: childPath, into: &errors)
                } else if let extra = k["additionalProperties"] {
                    validate(m.value.value, extra, document: document, path: childPath, into: &errors)
                }
            }
        }
        if case .array(let all)? = k["allOf"] {
            for s in all { validate(value, s.value, document: document, path: path, into: &errors) }
        }
        if case .array(let options)? = k["oneOf"] {
            var passing = 0
            for s in options {
                var e: [String] = []
                validate(value, s.value, document: document, path: path, into: &e)
                if e.isEmpty { passing += 1 }
            }
            if passing != 1 { errors.append("\(path): matches \(passing) of the oneOf schemas") }
        }
        if let condition = k["if"] {
            var e: [String] = []
            validate(value, condition, document: document, path: path, into: &e)
            if e.isEmpty, let then = k["then"] { validate(value, then, document: document, path: path, into: &errors) }
        }
    }

    static let known: Set<String> = [
        "$ref", "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "minLength", "pattern",
        "minItems", "maxItems", "prefixItems", "items", "required", "minProperties", "dependentRequired",
        "properties", "additionalProperties", "propertyNames", "allOf", "oneOf", "if", "then",
    ]

    private func member(_ value: JSONValue, _ key: String) -> JSONValue? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == key }?.value.value
    }

    private func isType(_ value: JSONValue, _ type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null), ("number", .number): return true
        case ("integer", .number(let x)): return x.rounded() == x
        default: return false
        }
    }

    private func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x.text == y.text
        case (.bool(let x), .bool(let y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }
}

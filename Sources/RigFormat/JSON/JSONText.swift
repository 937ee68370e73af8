/// Writes JSON text for the files `rig` writes itself (recordings, shot logs): the
/// counterpart of `JSONParser`, kept in one place so every writer escapes alike.
public enum JSONText {
    /// `s` as a JSON string literal, quotes included (RFC 8259 escapes; other
    /// characters are written as they are, in UTF-8).
    public static func string(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// `value` as a JSON number: whole numbers without `.0`, others in the shortest form
    /// that reads back to the same `Double`. JSON has no NaN or infinity: those are
    /// written as `null`, which a reader expecting a number refuses.
    public static func number(_ value: Double) -> String {
        value.isFinite ? format(value) : "null"
    }

    /// A whole value as compact JSON text, members in their order or, with `sortedKeys`,
    /// by name at every level.
    public static func value(_ value: JSONValue, sortedKeys: Bool = false) -> String {
        var out = ""
        write(value, sortedKeys: sortedKeys, to: &out)
        return out
    }

    /// A plain value's text (null, a boolean, a number, a string); nil for an array or an
    /// object. Both writers below start here.
    private static func scalar(_ value: JSONValue) -> String? {
        switch value {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): number(n)
        case .string(let s): string(s.text)
        case .array, .object: nil
        }
    }

    private static func write(_ value: JSONValue, sortedKeys: Bool, to out: inout String) {
        if let text = scalar(value) {
            out += text
            return
        }
        switch value {
        case .null, .bool, .number, .string: break
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item.value, sortedKeys: sortedKeys, to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, member) in (sortedKeys ? members.sorted { $0.key < $1.key } : members).enumerated() {
                if i > 0 { out += "," }
                out += string(member.key) + ":"
                write(member.value.value, sortedKeys: sortedKeys, to: &out)
            }
            out += "}"
        }
    }
}

extension JSONText {
    /// A parsed document written out again as a person would lay it out: two-space
    /// indents, members in their order, and an array of plain values (or a small object of
    /// them) on one line, as in the examples in rigs/. Parsing the text gives back the same
    /// values (numbers in their shortest exact form), only the places differ.
    public static func document(_ node: JSONNode) -> String {
        var out = ""
        write(node.value, indent: "", into: &out)
        return out + "\n"
    }

    private static func isPlain(_ value: JSONValue) -> Bool { scalar(value) != nil }

    private static func write(_ value: JSONValue, indent: String, into out: inout String) {
        if let text = scalar(value) {
            out += text
            return
        }
        switch value {
        case .null, .bool, .number, .string: break
        case .array(let items):
            if items.isEmpty {
                out += "[]"
            } else if items.allSatisfy({ isPlain($0.value) }) {
                out +=
                    "["
                    + items.map { item in
                        var text = ""
                        write(item.value, indent: "", into: &text)
                        return text
                    }.joined(separator: ", ") + "]"
            } else {
                let inner = indent + "  "
                out += "[\n"
                for (i, item) in items.enumerated() {
                    out += inner
                    write(item.value, indent: inner, into: &out)
                    out += i == items.count - 1 ? "\n" : ",\n"
                }
                out += indent + "]"
            }
        case .object(let members):
            if members.isEmpty {
                out += "{}"
            } else if members.count <= 4, members.allSatisfy({ isPlain($0.value.value) }) {
                out +=
                    "{ "
                    + members.map { member in
                        var text = string(member.key) + ": "
                        write(member.value.value, indent: "", into: &text)
                        return text
                    }.joined(separator: ", ") + " }"
            } else {
                let inner = indent + "  "
                out += "{\n"
                for (i, member) in members.enumerated() {
                    out += inner + string(member.key) + ": "
                    write(member.value.value, indent: inner, into: &out)
                    out += i == members.count - 1 ? "\n" : ",\n"
                }
                out += indent + "}"
            }
        }
    }
}

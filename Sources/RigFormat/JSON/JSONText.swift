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
}

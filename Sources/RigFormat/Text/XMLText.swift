/// The one XML text writer (SVG plots, Papywizard files).
public enum XMLText {
    /// Text content or an attribute value with XML's special characters escaped. XML 1.0
    /// has no control characters but tab, newline and return, not even escaped: the others
    /// become a space.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(c)
            case "\u{0}"..."\u{1F}": out += " "
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}

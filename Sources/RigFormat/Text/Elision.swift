/// Text from a file made safe for a terminal line: control characters (a newline, an
/// escape sequence that would recolour or clear the terminal), and the invisible
/// characters that reorder or split a line, written as `\u{1B}`. Everything else as is.
public func printable(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: needsEscape) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if needsEscape(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

private func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F: true  // C0 (tab and newline too), DEL, C1
    case 0x2028, 0x2029: true  // line and paragraph separators
    case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F: true  // bidirectional overrides and marks
    default: false
    }
}

/// Text from a file shortened for an error line: a 1 MB key or value must not become a
/// 1 MB message. Keeps the start and the end (where a typo usually shows) and says how
/// much was left out. Control characters are escaped (``printable(_:)``).
public func elided(_ text: String, maxCharacters: Int = 80) -> String {
    let text = printable(text)
    // utf8.count is O(1) for native strings; most values are short and return here.
    guard text.utf8.count > maxCharacters else { return text }
    let keep = max(8, maxCharacters / 2 - 10)
    var head = ""
    var tail = ""
    var count = 0
    for scalar in text.unicodeScalars {
        if count < keep { head.unicodeScalars.append(scalar) }
        count += 1
    }
    guard count > maxCharacters else { return text }
    var tailScalars: [Unicode.Scalar] = []
    for scalar in text.unicodeScalars.reversed() {
        tailScalars.append(scalar)
        if tailScalars.count == keep { break }
    }
    tail.unicodeScalars.append(contentsOf: tailScalars.reversed())
    return "\(head)…(\(count - 2 * keep) characters)…\(tail)"
}

/// Names from a file for an error line, quoted (or not, `quoted: false`): at most `limit` of them (each elided),
/// then how many more, so a rig of 10,000 axes does not make a 100 kB message.
public func quotedList(_ names: some Collection<String>, limit: Int = 12, quoted: Bool = true) -> String {
    var parts = names.prefix(limit).map { quoted ? "\"\(elided($0, maxCharacters: 40))\"" : elided($0, maxCharacters: 40) }
    if names.count > limit { parts.append("… (\(names.count - limit) more)") }
    return parts.joined(separator: ", ")
}

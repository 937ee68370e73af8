/// Text from a file shortened for an error line: a 1 MB key or value must not become a
/// 1 MB message. Keeps the start and the end (where a typo usually shows) and says how
/// much was left out.
public func elided(_ text: String, maxCharacters: Int = 80) -> String {
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

import Glibc

// The one place numbers become text for people (messages, reports, tables, SVG labels).
// Every function here takes any Double — nan, ±inf, 1e300 — without trapping: a hostile
// file can put such values in front of a formatter before any check has rejected them.

/// Magnitudes at or above this are printed in exponent form, never through `Int`.
private let wholeNumberLimit = 1e15

/// A number the way a user would write it: whole numbers without `.0` (`90`, `-2.5`,
/// `1e+300`, `nan`, `inf`).
public func format(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : value < 0 ? "-inf" : "inf" }
    if value.rounded() == value, abs(value) < wholeNumberLimit, let int = Int(exactly: value) { return String(int) }
    return String(value)
}

/// At most three decimals, no trailing zeros (`0.333`, `12`, `1e+300`): for measured
/// values in messages.
public func rounded(_ value: Double) -> String {
    guard value.isFinite, abs(value) < wholeNumberLimit else { return format(value) }
    let r = (value * 1000).rounded() / 1000
    return format(r == 0 ? 0 : r)  // no "-0"
}

/// Exactly `digits` decimals (`fixed(2.5, 1)` is `2.5`, `fixed(90, 2)` is `90.00`): for
/// table columns. Beyond ±1e15 or non-finite, falls back to `format`.
public func fixed(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite, abs(value) < wholeNumberLimit else { return format(value) }
    let d = min(max(digits, 0), 9)
    let text = printf("%.\(d)f", value)
    // "-0.0" reads as a sign error in a table.
    if text.hasPrefix("-"), text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { return String(text.dropFirst()) }
    return text
}

/// A fraction as a percentage with `digits` decimals: `percent(0.305)` is `31%`.
public func percent(_ fraction: Double, digits: Int = 0) -> String {
    guard fraction.isFinite else { return format(fraction * 100) + "%" }
    return fixed(fraction * 100, digits) + "%"
}

/// `n` with zeros in front up to `width` digits (`zeroPadded(7, 3)` is `007`): clock
/// fields, device numbers, passkeys.
public func zeroPadded(_ n: Int, _ width: Int) -> String {
    let digits = String(n.magnitude)
    let zeros = String(repeating: "0", count: max(0, width - digits.count - (n < 0 ? 1 : 0)))
    return (n < 0 ? "-" : "") + zeros + digits
}

/// C's `printf` of one number (the C library's, in the C locale: rig never calls
/// `setlocale`). `fixed` keeps it below 1e15 with at most 9 decimals: 27 characters at most.
private func printf(_ format: String, _ value: Double) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, format, $0) }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

extension String {
    /// The string with spaces in front up to `width` characters (right-aligned columns).
    public func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    /// The string cut or filled with spaces behind to exactly `width` characters
    /// (left-aligned columns).
    public func padded(toLength width: Int) -> String {
        count >= width ? String(prefix(width)) : self + String(repeating: " ", count: width - count)
    }
}

extension StringProtocol {
    /// The text without white space (spaces, tabs, line breaks) at either end.
    public func trimmed() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}

/// A size as cards and disks are sold (decimal): "1.2 GB", "350 MB", "12 kB".
public func decimalSize(bytes: Double) -> String {
    if bytes >= 1e9 { return "\(fixed(bytes / 1e9, 1)) GB" }
    if bytes >= 1e6 { return "\(Int((bytes / 1e6).rounded())) MB" }
    return "\(Int((max(bytes, 0) / 1e3).rounded())) kB"
}

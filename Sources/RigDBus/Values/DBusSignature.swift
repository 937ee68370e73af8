/// Splits D-Bus signatures into their single complete types (pure Swift, no libdbus call).
enum DBusSignature {
    /// The complete types of a valid signature, such as `["s", "a{sv}", "as"]` for `sa{sv}as`.
    /// Returns nil when the signature is not well formed.
    static func completeTypes(_ signature: String) -> [String]? {
        let chars = Array(signature.utf8)
        var types: [String] = []
        var index = 0
        while index < chars.count {
            guard let end = endOfType(chars, from: index) else { return nil }
            types.append(String(decoding: chars[index..<end], as: UTF8.self))
            index = end
        }
        return types
    }

    /// The key and value types of a dictionary entry signature body, such as `sv` → (`s`, `v`).
    static func keyAndValue(_ entryBody: String) -> (key: String, value: String)? {
        guard let types = completeTypes(entryBody), types.count == 2 else { return nil }
        return (types[0], types[1])
    }

    /// True for the signature of a basic (non-container) type, the only valid dictionary keys.
    static func isBasic(_ signature: String) -> Bool {
        signature.utf8.count == 1 && "ybnqiuxtdsogh".utf8.contains(signature.utf8.first ?? 0)
    }

    private static func endOfType(_ chars: [UInt8], from start: Int) -> Int? {
        guard start < chars.count else { return nil }
        switch chars[start] {
        case UInt8(ascii: "a"):
            return endOfType(chars, from: start + 1)
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            let close = chars[start] == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
            var index = start + 1
            while index < chars.count, chars[index] != close {
                guard let end = endOfType(chars, from: index) else { return nil }
                index = end
            }
            return index < chars.count && index > start + 1 ? index + 1 : nil
        default:
            return "ybnqiuxtdsoghv".utf8.contains(chars[start]) ? start + 1 : nil
        }
    }
}

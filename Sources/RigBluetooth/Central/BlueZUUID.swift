/// Bluetooth UUIDs as BlueZ writes them on D-Bus: lowercase, 128-bit.
public enum BlueZUUID {
    /// The Bluetooth base UUID's tail; a 16-bit UUID `XXXX` is `0000XXXX-` + this.
    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// The 128-bit lowercase form of `uuid`: a 16- or 32-bit short form (`FFE0`,
    /// `0xffe0`) is expanded over the base UUID; a full UUID is lowercased.
    public static func normalized(_ uuid: String) -> String {
        var text = uuid.lowercased()
        if text.hasPrefix("0x") { text.removeFirst(2) }
        if text.count <= 8, !text.isEmpty, text.allSatisfy(\.isHexDigit) {
            return String(repeating: "0", count: 8 - text.count) + text + baseSuffix
        }
        return text
    }

    /// True when both name the same UUID (in any of the forms ``normalized(_:)`` accepts).
    public static func matches(_ a: String, _ b: String) -> Bool {
        normalized(a) == normalized(b)
    }
}

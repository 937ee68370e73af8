/// A unix file descriptor carried by a `h` value.
///
/// Ownership follows libdbus: appending one to a message duplicates it, so the sender keeps
/// (and must eventually close) its own descriptor; every descriptor read from a message is a
/// fresh duplicate that the receiver owns and must close. Values that a reader decoded but
/// then rejected (a signature mismatch) have their descriptors closed by the reader.
public struct DBusUnixFD: Sendable, Hashable {
    public var rawValue: Int32

    public init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }
}

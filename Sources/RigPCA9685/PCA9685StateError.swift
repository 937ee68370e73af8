/// The state file could not be read or written.
public struct PCA9685StateError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "state file \(path) \(reason)" }
}

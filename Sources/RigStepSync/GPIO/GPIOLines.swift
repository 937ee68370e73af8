/// A button edge as the GPIO line source saw it, before debouncing.
public struct GPIOEdge: Sendable, Equatable {
    public enum Button: Sendable, Equatable { case `continue`, stop }
    public var button: Button
    /// True when the button went down (pressed), after active-low inversion.
    public var pressed: Bool
    /// Seconds on a monotonic scale (the kernel's event timestamp).
    public var timeSeconds: Double

    public init(button: Button, pressed: Bool, timeSeconds: Double) {
        self.button = button
        self.pressed = pressed
        self.timeSeconds = timeSeconds
    }
}

/// The buttons and LEDs: libgpiod on a real chip, or a fake in tests.
public protocol GPIOLines: AnyObject {
    /// Waits up to `timeoutSeconds` for button edges; an empty array on timeout.
    func readEdges(timeoutSeconds: Double) throws -> [GPIOEdge]
    func setLED(_ button: GPIOEdge.Button, on: Bool)
    func close()
}

/// Leading-edge debouncing: a press counts at once; further edges within `debounce`
/// of the last accepted change are contact bounce and ignored.
public struct ButtonDebouncer: Sendable {
    public let debounceSeconds: Double
    private var pressed: [GPIOEdge.Button: Bool] = [:]
    private var lastChange: [GPIOEdge.Button: Double] = [:]

    public init(debounceSeconds: Double) {
        self.debounceSeconds = debounceSeconds
    }

    /// Returns the button if this edge is a real press.
    public mutating func feed(_ edge: GPIOEdge) -> GPIOEdge.Button? {
        if let last = lastChange[edge.button], edge.timeSeconds - last < debounceSeconds { return nil }
        let was = pressed[edge.button] ?? false
        guard edge.pressed != was else { return nil }
        pressed[edge.button] = edge.pressed
        lastChange[edge.button] = edge.timeSeconds
        return edge.pressed ? edge.button : nil
    }
}

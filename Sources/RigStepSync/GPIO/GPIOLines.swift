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
/// of the last accepted change are contact bounce and ignored. A release lost in the
/// bounce is noticed when the next press arrives (the raw level went up again).
public struct ButtonDebouncer: Sendable {
    public let debounceSeconds: Double
    private var accepted: [GPIOEdge.Button: Bool] = [:]
    private var raw: [GPIOEdge.Button: Bool] = [:]
    private var lastChange: [GPIOEdge.Button: Double] = [:]

    public init(debounceSeconds: Double) {
        self.debounceSeconds = debounceSeconds
    }

    /// Returns the button if this edge is a real press.
    public mutating func feed(_ edge: GPIOEdge) -> GPIOEdge.Button? {
        let button = edge.button
        let wasPressed = accepted[button] ?? false
        let wasRawPressed = raw[button] ?? false
        raw[button] = edge.pressed
        if let last = lastChange[button], edge.timeSeconds - last < debounceSeconds { return nil }
        if edge.pressed {
            // A new press, even if its release was lost in the previous bounce.
            guard !wasPressed || !wasRawPressed else { return nil }
            accepted[button] = true
            lastChange[button] = edge.timeSeconds
            return button
        }
        if wasPressed {
            accepted[button] = false
            lastChange[button] = edge.timeSeconds
        }
        return nil
    }
}

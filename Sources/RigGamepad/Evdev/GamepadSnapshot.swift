import RigCore

/// What the jog source needs from the input side, as of the last packet: a plain value
/// (no heap storage) so publishing it and reading it never allocate. Counters only grow;
/// a gamepad and the keyboard may both add to them.
public struct GamepadSnapshot: Sendable, Equatable {
    /// Stick deflection −1…1 per `JogConfig.Stick` (leftx, lefty, rightx, righty), as the
    /// device reports it (right and down positive), before deadzone and expo.
    public var sticks: SIMD4<Double> = .zero
    /// Presses so far per action (`JogAction.slot`); the source acts on changes.
    public var actions: SIMD16<UInt32> = .zero
    /// Presses so far per button (`GamepadLayout.buttonOrder`), whatever action the jog
    /// layout gives it (`rig calibrate servo` has a layout of its own).
    public var buttonPresses: SIMD16<UInt32> = .zero
    /// D-pad presses so far: up, down, left, right (one nudge each).
    public var nudges: SIMD4<UInt32> = .zero
    /// Keyboard arrow presses so far: left, right, up, down (each moves for a moment, so
    /// a key held with autorepeat keeps moving).
    public var pulses: SIMD4<UInt32> = .zero
    /// Counts every packet and every successful device probe: the watchdog's evidence
    /// that input is alive.
    public var signsOfLife: UInt64 = 0
    /// A gamepad is open (false: never found, or unplugged).
    public var gamepadConnected = false
    /// The terminal keyboard is in use as the input.
    public var keyboardActive = false
    /// The open gamepad's stick `flat` as a fraction of travel: the deadzone's floor.
    public var stickFlat = 0.0
    /// Bumped on each gamepad (re)connection.
    public var generation: UInt32 = 0

    /// Some input can drive the rig.
    @inline(__always)
    public var connected: Bool { gamepadConnected || keyboardActive }

    public init() {}

    /// Counts one press of `action`.
    @inline(__always)
    public mutating func press(_ action: JogConfig.Action) {
        let slot = action.slot
        actions[slot] &+= 1
    }
}

extension JogConfig.Action {
    /// A fixed index per action (for `GamepadSnapshot.actions`), without `allCases`.
    @inline(__always)
    public var slot: Int {
        switch self {
        case .record: 0
        case .delete: 1
        case .home: 2
        case .preview: 3
        case .save: 4
        case .slower: 5
        case .faster: 6
        case .quit: 7
        case .none: 8
        }
    }
}

import RigCore

/// Turns complete evdev packets into what jogging needs: normalized sticks (using each
/// axis's EVIOCGABS range) and counted presses of actions and d-pad directions. Pure;
/// sized at setup so `apply` never allocates.
public struct GamepadInterpreter: Sendable {
    public let layout: GamepadLayout
    /// The action of each layout button (`GamepadLayout.buttonOrder`).
    public let buttonActions: [JogConfig.Action]
    /// Indexed by ABS_* code; axes the device lacks keep a zero range (read as 0).
    private var ranges: [AbsInfo]
    private var heldButtons: UInt32 = 0
    private var heldDpad: UInt32 = 0

    public init(layout: GamepadLayout, config: JogConfig) {
        self.layout = layout
        buttonActions = GamepadLayout.buttonOrder.map { config.buttons[$0] ?? JogConfig.Action.none }
        ranges = [AbsInfo](repeating: AbsInfo(minimum: 0, maximum: 0), count: EvdevCode.absMax + 1)
    }

    /// Records an axis's range (from EVIOCGABS at open).
    public mutating func setRange(_ info: AbsInfo, axis code: UInt16) {
        if Int(code) < ranges.count { ranges[Int(code)] = info }
    }

    public func range(axis code: UInt16) -> AbsInfo {
        Int(code) < ranges.count ? ranges[Int(code)] : AbsInfo(minimum: 0, maximum: 0)
    }

    /// The largest `flat` of the stick axes as a fraction of their travel: the device's
    /// own idea of the smallest deadzone.
    public var stickFlatFraction: Double {
        var flat = 0.0
        for source in layout.sticks {
            if case .axis(let code, _, _)? = source { flat = max(flat, range(axis: code).flatFraction) }
        }
        return flat
    }

    /// Takes the state as it is without counting presses (at open and after a resync
    /// following a reconnect), so a button held while plugging in does nothing.
    public mutating func adopt(_ state: EvdevState, into snapshot: inout GamepadSnapshot) {
        heldButtons = 0
        heldDpad = 0
        apply(state, to: &snapshot, countPresses: false)
    }

    /// Updates `snapshot` from a complete packet's state.
    @inline(__always)
    public mutating func apply(_ state: EvdevState, to snapshot: inout GamepadSnapshot, countPresses: Bool = true) {
        for i in 0..<min(4, layout.sticks.count) {
            snapshot.sticks[i] = layout.sticks[i].map { value(of: $0, in: state) } ?? 0
        }
        for i in layout.buttons.indices {
            let down = layout.buttons[i].map { isDown($0, in: state) } ?? false
            let bit = UInt32(1) << UInt32(i)
            if down, heldButtons & bit == 0, countPresses {
                if buttonActions[i] != .none { snapshot.press(buttonActions[i]) }
                if i < 16 { snapshot.buttonPresses[i] &+= 1 }
            }
            heldButtons = down ? heldButtons | bit : heldButtons & ~bit
        }
        for i in 0..<min(4, layout.dpad.count) {
            let down = layout.dpad[i].map { isDown($0, in: state) } ?? false
            let bit = UInt32(1) << UInt32(i)
            if down, heldDpad & bit == 0, countPresses { snapshot.nudges[i] &+= 1 }
            heldDpad = down ? heldDpad | bit : heldDpad & ~bit
        }
    }

    @inline(__always)
    func value(of source: ControlSource, in state: EvdevState) -> Double {
        switch source {
        case .key(let code):
            return state.isDown(code) ? 1 : 0
        case .axis(let code, let inverted, let half):
            var v = range(axis: code).normalized(state.abs(code))
            if inverted { v = -v }
            switch half {
            case .full: return v
            case .positive: return max(v, 0)
            case .negative: return max(-v, 0)
            }
        case .hat(let code, let direction):
            return state.abs(code) * direction > 0 ? 1 : 0
        }
    }

    @inline(__always)
    func isDown(_ source: ControlSource, in state: EvdevState) -> Bool {
        value(of: source, in: state) > 0.5
    }
}

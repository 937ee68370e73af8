import CLinux
import RigCore

/// Where a logical control's value comes from on one evdev device.
public enum ControlSource: Sendable, Equatable {
    /// A key/button code (EV_KEY).
    case key(UInt16)
    /// An absolute axis. As a button: pressed beyond half of the used half.
    case axis(UInt16, inverted: Bool, half: SDLMapping.Half)
    /// One direction (−1 or +1) of a hat axis (ABS_HAT*: −1, 0, 1).
    case hat(UInt16, direction: Int32)
}

/// The gamepad's controls resolved to evdev codes: the Linux standard layout
/// (Documentation/input/gamepad.rst) or an SDL GameControllerDB mapping.
public struct GamepadLayout: Sendable, Equatable {
    /// In `JogConfig.Stick.allCases` order: leftx, lefty, rightx, righty.
    public var sticks: [ControlSource?]
    /// In `JogConfig.Button.allCases` order.
    public var buttons: [ControlSource?]
    /// D-pad up, down, left, right.
    public var dpad: [ControlSource?]

    public static let stickOrder = JogConfig.Stick.allCases
    public static let buttonOrder = JogConfig.Button.allCases

    /// The standard layout: sticks ABS_X/ABS_Y and ABS_RX/ABS_RY; A/B/X/Y the
    /// south/east/west/north face buttons; the d-pad from BTN_DPAD_* if the device has
    /// them, else from ABS_HAT0X/ABS_HAT0Y.
    public static func standard(keys: EvdevBitmap) -> GamepadLayout {
        let sticks: [ControlSource?] = [ABS_X, ABS_Y, ABS_RX, ABS_RY].map { .axis(UInt16($0), inverted: false, half: .full) }
        var buttons = [ControlSource?](repeating: nil, count: buttonOrder.count)
        for (i, button) in buttonOrder.enumerated() {
            let code: Int32
            switch button {
            case .a: code = BTN_SOUTH
            case .b: code = BTN_EAST
            case .x: code = BTN_WEST
            case .y: code = BTN_NORTH
            case .back: code = BTN_SELECT
            case .start: code = BTN_START
            case .guide: code = BTN_MODE
            case .leftshoulder: code = BTN_TL
            case .rightshoulder: code = BTN_TR
            case .leftstick: code = BTN_THUMBL
            case .rightstick: code = BTN_THUMBR
            }
            buttons[i] = .key(UInt16(code))
        }
        let dpad: [ControlSource?]
        if keys.contains(Int(BTN_DPAD_UP)) {
            dpad = [BTN_DPAD_UP, BTN_DPAD_DOWN, BTN_DPAD_LEFT, BTN_DPAD_RIGHT].map { .key(UInt16($0)) }
        } else {
            dpad = [
                .hat(EvdevCode.absHat0Y, direction: -1), .hat(EvdevCode.absHat0Y, direction: 1),
                .hat(EvdevCode.absHat0X, direction: -1), .hat(EvdevCode.absHat0X, direction: 1),
            ]
        }
        return GamepadLayout(sticks: sticks, buttons: buttons, dpad: dpad)
    }

    /// Resolves an SDL mapping against the device's capabilities, numbering buttons,
    /// axes and hats the way SDL's Linux joystick driver does: buttons from BTN_JOYSTICK
    /// up to KEY_MAX, then from 0 up to BTN_JOYSTICK; axes in code order below ABS_MAX
    /// skipping the hats; hats in pairs from ABS_HAT0X.
    public static func sdl(_ mapping: SDLMapping, keys: EvdevBitmap, abs: EvdevBitmap) -> GamepadLayout {
        var buttonCodes: [UInt16] = []
        for code in EvdevCode.btnJoystick..<EvdevCode.keyMax where keys.contains(code) { buttonCodes.append(UInt16(code)) }
        for code in 0..<EvdevCode.btnJoystick where keys.contains(code) { buttonCodes.append(UInt16(code)) }
        var axisCodes: [UInt16] = []
        for code in 0..<EvdevCode.absMax where abs.contains(code) {
            if code >= Int(EvdevCode.absHat0X), code <= Int(EvdevCode.absHat3Y) { continue }
            axisCodes.append(UInt16(code))
        }
        var hatCodes: [(x: UInt16, y: UInt16)] = []
        for x in stride(from: Int(EvdevCode.absHat0X), through: Int(EvdevCode.absHat3Y), by: 2) where abs.contains(x) || abs.contains(x + 1) {
            hatCodes.append((UInt16(x), UInt16(x + 1)))
        }
        func resolve(_ name: String) -> ControlSource? {
            switch mapping.bindings[name] {
            case .button(let n)?:
                return n < buttonCodes.count ? .key(buttonCodes[n]) : nil
            case .axis(let n, let inverted, let half)?:
                return n < axisCodes.count ? .axis(axisCodes[n], inverted: inverted, half: half) : nil
            case .hat(let n, let mask)?:
                guard n < hatCodes.count else { return nil }
                switch mask {
                case 1: return .hat(hatCodes[n].y, direction: -1)
                case 4: return .hat(hatCodes[n].y, direction: 1)
                case 8: return .hat(hatCodes[n].x, direction: -1)
                default: return .hat(hatCodes[n].x, direction: 1)
                }
            case nil:
                return nil
            }
        }
        return GamepadLayout(
            sticks: stickOrder.map { resolve($0.rawValue) },
            buttons: buttonOrder.map { resolve($0.rawValue) },
            dpad: ["dpup", "dpdown", "dpleft", "dpright"].map(resolve))
    }

    /// Every absolute axis the layout reads (to fetch their ranges once).
    public var absCodes: [UInt16] {
        var codes: [UInt16] = []
        for source in sticks + buttons + dpad {
            switch source {
            case .axis(let code, _, _)?, .hat(let code, _)?: if !codes.contains(code) { codes.append(code) }
            default: break
            }
        }
        return codes
    }
}

import RigCore

/// An SDL GameControllerDB mapping string
/// (`GUID,name,a:b0,b:b1,leftx:a0,dpup:h0.1,…,platform:Linux,`): which joystick button,
/// axis or hat bit each standard gamepad control is. Indices are SDL's joystick indices;
/// turning them into evdev codes needs the device's capabilities (RigGamepad does it).
public struct SDLMapping: Sendable, Equatable {
    /// Where one control comes from, in SDL's joystick numbering.
    public enum Binding: Sendable, Equatable {
        /// `bN`: button N.
        case button(Int)
        /// `aN`, `aN~` (inverted), `+aN`/`-aN` (only that half of the axis).
        case axis(Int, inverted: Bool, half: Half)
        /// `hN.M`: hat N, direction bit M (1 up, 2 right, 4 down, 8 left).
        case hat(Int, mask: Int)
    }

    /// Which part of an axis a binding uses.
    public enum Half: Sendable, Equatable {
        case full, positive, negative
    }

    public var guid: String
    public var name: String
    /// Control name (`a`, `leftx`, `dpup`, …) → binding. Fields this parser does not
    /// know (`platform`, `crc`, `misc1`, …) are kept out.
    public var bindings: [String: Binding]

    /// The control names this project uses; other names are accepted and ignored.
    public static let knownControls: Set<String> = [
        "a", "b", "x", "y", "back", "guide", "start", "leftstick", "rightstick",
        "leftshoulder", "rightshoulder", "dpup", "dpdown", "dpleft", "dpright",
        "leftx", "lefty", "rightx", "righty", "lefttrigger", "righttrigger",
    ]

    /// Parses a mapping string; the error says which field is wrong and why.
    public static func parse(_ text: String) -> Result<SDLMapping, SDLMappingError> {
        let fields = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 3 else {
            return .failure(SDLMappingError(message: "expected \"GUID,name,control:binding,…\" with at least one control"))
        }
        var bindings: [String: Binding] = [:]
        for field in fields.dropFirst(2) where !field.isEmpty {
            guard let colon = field.firstIndex(of: ":") else {
                return .failure(SDLMappingError(message: "field \"\(field)\" is not control:binding"))
            }
            let control = String(field[..<colon])
            let value = String(field[field.index(after: colon)...])
            guard knownControls.contains(control) else { continue }
            guard let binding = parseBinding(value) else {
                return .failure(SDLMappingError(message: "\"\(field)\": \"\(value)\" is not a binding; valid: bN, aN, aN~, +aN, -aN, hN.M"))
            }
            bindings[control] = binding
        }
        guard !bindings.isEmpty else {
            return .failure(SDLMappingError(message: "no control bindings (such as a:b0, leftx:a0) found"))
        }
        return .success(SDLMapping(guid: fields[0], name: fields[1], bindings: bindings))
    }

    static func parseBinding(_ text: String) -> Binding? {
        var s = Substring(text)
        var half = Half.full
        if s.hasPrefix("+") {
            half = .positive
            s = s.dropFirst()
        } else if s.hasPrefix("-") {
            half = .negative
            s = s.dropFirst()
        }
        var inverted = false
        if s.hasSuffix("~") {
            inverted = true
            s = s.dropLast()
        }
        guard let kind = s.first else { return nil }
        let rest = s.dropFirst()
        switch kind {
        case "b":
            guard half == .full, !inverted, let n = Int(rest), n >= 0 else { return nil }
            return .button(n)
        case "a":
            guard let n = Int(rest), n >= 0 else { return nil }
            return .axis(n, inverted: inverted, half: half)
        case "h":
            let parts = rest.split(separator: ".")
            guard half == .full, !inverted, parts.count == 2, let n = Int(parts[0]), let m = Int(parts[1]),
                n >= 0, [1, 2, 4, 8].contains(m)
            else { return nil }
            return .hat(n, mask: m)
        default:
            return nil
        }
    }
}

/// Why an SDL mapping string could not be read.
public struct SDLMappingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

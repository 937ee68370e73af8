import FoundationEssentials
import Glibc
import RigFormat
import RigSky

/// What a key (or a typed line) asks of a stepped program under the keyboard trigger.
public enum StepKeyCommand: Sendable, Equatable {
    /// Enter: go on to the next step.
    case next
    /// `r`: shoot this step again.
    case redo
    /// `b`: back one step (move there and shoot it again).
    case back
    /// `g` then a number and Enter: go to that step (1-based) and shoot it.
    case goTo(step: Int)
    /// `h`: to the rig's home pose (no shot there); Enter then goes on with the next step.
    case home
    /// `q`: stop (brake, park, safe state).
    case stop
    /// `+` or `-`: nudge an exposure ramp by `RampNudge.stepEV`, brighter or darker.
    case nudge(by: Double)
}

/// Decodes the keyboard trigger's keys: single keys in a raw terminal (`feed`), or whole
/// lines when stdin is not a terminal (`parse(line:)`). Pure.
public struct StepKeyReader: Sendable {
    /// The digits typed after `g` so far; nil when not typing a step number.
    public private(set) var typedStep: String?

    public static let help = "Enter next · r redo · b back · g N Enter go to step N · h home · q stop · + - nudge a ramp"

    public init() {}

    /// Feeds one byte from a raw terminal; returns the command it completes, if any.
    public mutating func feed(_ byte: UInt8) -> StepKeyCommand? {
        if var digits = typedStep {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if digits.count < 9 { digits.unicodeScalars.append(Unicode.Scalar(byte)) }
                typedStep = digits
                return nil
            case 0x7F, 0x08:
                if !digits.isEmpty { digits.removeLast() }
                typedStep = digits
                return nil
            case 0x0D, 0x0A:
                typedStep = nil
                return Int(digits).map { .goTo(step: $0) }
            default:
                // Anything else (Esc included) cancels the number.
                typedStep = nil
                return nil
            }
        }
        switch byte {
        case 0x0D, 0x0A: return .next
        case UInt8(ascii: "r"), UInt8(ascii: "R"): return .redo
        case UInt8(ascii: "b"), UInt8(ascii: "B"): return .back
        case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .stop
        case UInt8(ascii: "h"), UInt8(ascii: "H"): return .home
        case UInt8(ascii: "g"), UInt8(ascii: "G"):
            typedStep = ""
            return nil
        case UInt8(ascii: "+"), UInt8(ascii: "="): return .nudge(by: RampNudge.stepEV)
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return .nudge(by: -RampNudge.stepEV)
        default: return nil
        }
    }

    /// One typed line (stdin not a terminal): empty → next, `r`, `b`, `q`, `h`, `g N`, `+`, `-`.
    public static func parse(line: String) -> StepKeyCommand? {
        let text = line.trimmed().lowercased()
        switch text {
        case "": return .next
        case "r", "redo": return .redo
        case "b", "back": return .back
        case "q", "quit", "stop": return .stop
        case "h", "home": return .home
        case "+": return .nudge(by: RampNudge.stepEV)
        case "-": return .nudge(by: -RampNudge.stepEV)
        default:
            guard text.hasPrefix("g") else { return nil }
            let number = text.dropFirst().trimmed()
            return Int(number).map { .goTo(step: $0) }
        }
    }
}

/// Why a line was ignored. The protocol has no error reply: the device logs this and
/// carries on; nothing moves.
public enum DFMocoRejection: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownCommand(String)
    /// `expected` describes the valid counts ("1", "2 or 3", "2 + 4·n").
    case wrongArgumentCount(command: String, expected: String, found: Int)
    case notANumber(command: String, argument: String)
    /// A number outside what the command accepts (a step count beyond 32 bits, blur over 1000).
    case valueOutOfRange(command: String, what: String, value: Int, valid: ClosedRange<Int>)
    case motorOutOfRange(command: String, motor: Int, motorCount: Int)
    /// `bf` names a motor twice.
    case duplicateMotor(command: String, motor: Int)
    /// The line ran past `DFMocoLineBuffer.maximumLineBytes` before its newline.
    case lineTooLong(bytes: Int)

    public var description: String {
        switch self {
        case .unknownCommand(let c):
            "unknown command \"\(c)\"; valid: hi ms mm mp sm sa jm im pr zm np bf go"
        case .wrongArgumentCount(let c, let expected, let found):
            "\(c): \(found) argument\(found == 1 ? "" : "s"); valid: \(expected)"
        case .notANumber(let c, let argument):
            "\(c): \"\(argument)\" is not an integer"
        case .valueOutOfRange(let c, let what, let value, let valid):
            "\(c): \(what) \(value) is out of range; valid: \(valid.lowerBound)…\(valid.upperBound)"
        case .motorOutOfRange(let c, let motor, let count):
            "\(c): motor \(motor) does not exist; valid: 1…\(count)"
        case .duplicateMotor(let c, let motor):
            "\(c): motor \(motor) is listed twice"
        case .lineTooLong(let bytes):
            "a line of \(bytes)+ bytes (over \(DFMocoLineBuffer.maximumLineBytes)) was dropped"
        }
    }
}

import RigFormat

/// Turns one DFMoco line (without its `\r\n`) into a checked request or the reason it is
/// ignored. Pure and total: any bytes in, a value out; it never traps.
public enum DFMocoParser {
    /// Step positions and rates are 32-bit signed on the devices Dragonframe talks to.
    public static let stepRange: ClosedRange<Int> = -2_147_483_647...2_147_483_647
    /// `jm`'s velocity: 0…10000 is 0…100 % of the pulse rate.
    public static let jogVelocityRange: ClosedRange<Int> = 0...10_000
    public static let blurRange: ClosedRange<Int> = 0...1000
    /// Up to an hour; a longer exposure is no go-motion move.
    public static let exposureRange: ClosedRange<Int> = 1...3_600_000
    public static let pulseRateRange: ClosedRange<Int> = 1...2_147_483_647

    /// - Parameter motorCount: motors are valid from 1 to this.
    public static func parse<Bytes: Collection<UInt8>>(_ line: Bytes, motorCount: Int) -> Result<DFMocoRequest, DFMocoRejection> {
        var words: [ArraySlice<UInt8>] = []
        var current: [UInt8] = []
        for byte in line {
            if byte == 0x20 || byte == 0x09 || byte == 0x0D {
                if !current.isEmpty {
                    words.append(current[...])
                    current = []
                }
            } else {
                current.append(byte)
            }
        }
        if !current.isEmpty { words.append(current[...]) }
        guard let first = words.first else { return .failure(.unknownCommand("")) }
        let command = printable(first)
        let parser = Arguments(command: command, words: words.dropFirst(), motorCount: motorCount)
        do {
            return .success(try parser.request())
        } catch {
            return .failure(error)
        }
    }

    /// `bytes` as text for a log line: at most 24 characters, control bytes and non-ASCII
    /// shown as `\xNN`.
    public static func printable<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        var text = ""
        for byte in bytes.prefix(24) {
            if byte >= 0x20, byte < 0x7F {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            }
        }
        if bytes.count > 24 { text += "…" }
        return text
    }

    /// An ASCII integer (optional leading `-`), or nil. Long digit strings saturate far
    /// outside every range instead of overflowing.
    static func integer(_ word: ArraySlice<UInt8>) -> Int? {
        var digits = word[...]
        var negative = false
        if digits.first == 0x2D {
            negative = true
            digits = digits.dropFirst()
        }
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            if value < 1_000_000_000_000 { value = value * 10 + Int(byte - 0x30) }
        }
        return negative ? -value : value
    }

    /// Reads a command's arguments in order.
    private struct Arguments {
        let command: String
        let words: ArraySlice<ArraySlice<UInt8>>
        let motorCount: Int

        init(command: String, words: ArraySlice<ArraySlice<UInt8>>, motorCount: Int) {
            self.command = command
            self.words = words
            self.motorCount = motorCount
        }

        func request() throws(DFMocoRejection) -> DFMocoRequest {
            switch command {
            case "hi":
                try count(0)
                return .hello
            case "ms":
                try count(0)
                return .movingStatus
            case "sa":
                try count(0)
                return .stopAll
            case "go":
                try count(0)
                return .go
            case "mp":
                try count(1)
                return .motorPosition(motor: try motor(0))
            case "sm":
                try count(1)
                return .stopMotor(motor: try motor(0))
            case "zm":
                try count(1)
                return .zeroMotor(motor: try motor(0))
            case "mm":
                try count(2)
                return .moveMotor(motor: try motor(0), position: try number(1, "position", DFMocoParser.stepRange))
            case "np":
                try count(2)
                return .newPosition(motor: try motor(0), position: try number(1, "position", DFMocoParser.stepRange))
            case "im":
                try count(2)
                return .inchMotor(motor: try motor(0), destination: try number(1, "destination", DFMocoParser.stepRange))
            case "pr":
                try count(2)
                return .pulseRate(motor: try motor(0), stepsPerSecond: try number(1, "steps/s", DFMocoParser.pulseRateRange))
            case "jm":
                guard words.count == 2 || words.count == 3 else {
                    throw .wrongArgumentCount(command: command, expected: "2 or 3", found: words.count)
                }
                let m = try motor(0)
                let destination = try number(1, "destination", DFMocoParser.stepRange)
                let velocity = words.count == 3 ? try number(2, "velocity", DFMocoParser.jogVelocityRange) : nil
                return .jogMotor(motor: m, destination: destination, velocity: velocity)
            case "bf":
                return .blurSetup(try blurSetup())
            default:
                throw .unknownCommand(command)
            }
        }

        private func blurSetup() throws(DFMocoRejection) -> GoMotionRequest {
            guard words.count >= 2, (words.count - 2) % 4 == 0 else {
                throw .wrongArgumentCount(command: command, expected: "2 + 4·n (exposure, blur, then motor p0 p1 p2 per motor)", found: words.count)
            }
            let exposure = try number(0, "exposure (ms)", DFMocoParser.exposureRange)
            let blur = try number(1, "blur", DFMocoParser.blurRange)
            var motors: [GoMotionRequest.Motor] = []
            var k = 2
            while k < words.count {
                let m = try motor(k)
                if motors.contains(where: { $0.motor == m }) { throw .duplicateMotor(command: command, motor: m) }
                motors.append(
                    GoMotionRequest.Motor(
                        motor: m, previous: try number(k + 1, "p0", DFMocoParser.stepRange),
                        current: try number(k + 2, "p1", DFMocoParser.stepRange), next: try number(k + 3, "p2", DFMocoParser.stepRange)))
                k += 4
            }
            return GoMotionRequest(exposureMilliseconds: exposure, blur: blur, motors: motors)
        }

        private func count(_ n: Int) throws(DFMocoRejection) {
            guard words.count == n else { throw .wrongArgumentCount(command: command, expected: "\(n)", found: words.count) }
        }

        private func word(_ i: Int) -> ArraySlice<UInt8> { words[words.startIndex + i] }

        private func number(_ i: Int, _ what: String, _ range: ClosedRange<Int>) throws(DFMocoRejection) -> Int {
            guard let value = DFMocoParser.integer(word(i)) else {
                throw .notANumber(command: command, argument: DFMocoParser.printable(word(i)))
            }
            guard range.contains(value) else { throw .valueOutOfRange(command: command, what: what, value: value, valid: range) }
            return value
        }

        private func motor(_ i: Int) throws(DFMocoRejection) -> Int {
            guard let value = DFMocoParser.integer(word(i)) else {
                throw .notANumber(command: command, argument: DFMocoParser.printable(word(i)))
            }
            guard value >= 1, value <= motorCount else { throw .motorOutOfRange(command: command, motor: value, motorCount: motorCount) }
            return value
        }
    }
}

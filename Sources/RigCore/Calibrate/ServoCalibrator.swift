import RigFormat

/// `rig calibrate servo`'s state: the raw pulse an axis's channel is sent, the range it may
/// be sent in (shown on screen, widened only on request), the marked ends of travel, the
/// deadband search and the angle ↔ pulse points the user read off. Pure: keys in, the
/// pulse to move to and what to say out; the session moves the servo.
///
/// The one rule it keeps: `pulseMicroseconds` never leaves `allowed`, the shown range
/// narrowed to the marked ends of travel, and nothing outside `window` is ever asked for.
public struct ServoCalibrator: Sendable {
    /// What a key asks for.
    public enum Key: Sendable, Equatable {
        /// Move by this many µs (fine, coarse, or 1 µs).
        case step(Double)
        /// Widen the shown range by `widenStepMicroseconds` on each side.
        case widen
        /// Mark the current pulse as the low or the high end of travel.
        case markLow, markHigh
        /// Start the deadband search, or, during it, "it moved now".
        case deadband
        /// Start typing the angle the axis shows now.
        case typeAngle
        /// A character of the typed angle (digits, `-`, `.`).
        case text(Character)
        case backspace
        /// Enter: record the typed angle.
        case enter
        /// Esc: stop typing, or cancel the deadband search.
        case cancel
        /// Delete the last recorded point.
        case deleteLast
        case save
        case quit
    }

    /// What the session must do after a key.
    public enum Action: Sendable, Equatable {
        case none
        /// Move the channel to this pulse (inside `allowed`).
        case move(toMicroseconds: Double)
        /// Write `calibration` into the rig file and end.
        case save(Calibration)
        /// End without saving.
        case quit
    }

    /// One recorded point.
    public struct Point: Sendable, Equatable {
        public var angleDeg: Double
        public var pulseMicroseconds: Double
        public init(angleDeg: Double, pulseMicroseconds: Double) {
            self.angleDeg = angleDeg
            self.pulseMicroseconds = pulseMicroseconds
        }
    }

    /// The pulses a rig file can hold (`calibration`, `pulseUs`): the widest range ever shown.
    public static let pulseLimits: ClosedRange<Double> = 200...3000
    /// Half the first range shown, around the start pulse.
    public static let initialHalfWidthMicroseconds = 300.0
    public static let widenStepMicroseconds = 100.0
    public static let fineStepMicroseconds = 5.0
    public static let coarseStepMicroseconds = 50.0

    /// The range shown on screen; the servo is never sent a pulse outside it.
    public private(set) var window: ClosedRange<Double>
    public private(set) var pulseMicroseconds: Double
    public private(set) var lowEnd: Double?
    public private(set) var highEnd: Double?
    public private(set) var points: [Point] = []
    /// The pulse the deadband search started from, while it runs.
    public private(set) var deadbandStart: Double?
    /// The last deadband found, µs.
    public private(set) var deadbandMicroseconds: Double?
    /// The angle being typed, while it is.
    public private(set) var typed: String?
    /// The last thing to tell the user (a refusal, a result), cleared by the next key.
    public private(set) var message: String?

    /// - Parameter startMicroseconds: where the channel is now (or the rig file's pulse at
    ///   the axis's home); the first range is ±`initialHalfWidthMicroseconds` around it.
    public init(startMicroseconds: Double) {
        let start = min(max(startMicroseconds.rounded(), Self.pulseLimits.lowerBound), Self.pulseLimits.upperBound)
        pulseMicroseconds = start
        window =
            max(
                start - Self.initialHalfWidthMicroseconds, Self.pulseLimits.lowerBound)...min(
                start + Self.initialHalfWidthMicroseconds, Self.pulseLimits.upperBound)
    }

    /// Where the pulse may go now: the shown range, inside the marked ends of travel.
    public var allowed: ClosedRange<Double> {
        let low = max(window.lowerBound, lowEnd ?? -.infinity)
        let high = min(window.upperBound, highEnd ?? .infinity)
        return low <= high ? low...high : low...low
    }

    public mutating func handle(_ key: Key) -> Action {
        message = nil
        if typed != nil { return typing(key) }
        switch key {
        case .step(let delta):
            return move(to: pulseMicroseconds + delta)
        case .widen:
            let wider =
                max(
                    window.lowerBound - Self.widenStepMicroseconds, Self.pulseLimits.lowerBound)...min(
                    window.upperBound + Self.widenStepMicroseconds, Self.pulseLimits.upperBound)
            if wider == window {
                message = "the range is already \(format(Self.pulseLimits.lowerBound))…\(format(Self.pulseLimits.upperBound)) µs, the most a rig file takes"
            }
            window = wider
            return .none
        case .markLow:
            if let highEnd, pulseMicroseconds >= highEnd {
                message = "the low end must be below the high end (\(format(highEnd)) µs)"
                return .none
            }
            lowEnd = pulseMicroseconds
            message = "low end of travel: \(format(pulseMicroseconds)) µs"
            return .none
        case .markHigh:
            if let lowEnd, pulseMicroseconds <= lowEnd {
                message = "the high end must be above the low end (\(format(lowEnd)) µs)"
                return .none
            }
            highEnd = pulseMicroseconds
            message = "high end of travel: \(format(pulseMicroseconds)) µs"
            return .none
        case .deadband:
            if let start = deadbandStart {
                deadbandMicroseconds = abs(pulseMicroseconds - start)
                deadbandStart = nil
                message = "deadband: \(format(deadbandMicroseconds ?? 0)) µs"
            } else {
                deadbandStart = pulseMicroseconds
                message = "deadband: step with , or . (1 µs) until the horn moves, then press d"
            }
            return .none
        case .typeAngle:
            typed = ""
            return .none
        case .cancel:
            if deadbandStart != nil {
                deadbandStart = nil
                message = "deadband search cancelled"
            }
            return .none
        case .deleteLast:
            if let last = points.popLast() {
                message = "deleted \(format(last.angleDeg))° at \(format(last.pulseMicroseconds)) µs"
            }
            return .none
        case .save:
            switch calibration() {
            case .success(let calibration): return .save(calibration)
            case .failure(let problem):
                message = "cannot save yet: \(problem)"
                return .none
            }
        case .quit:
            return .quit
        case .text, .backspace, .enter:
            return .none
        }
    }

    /// The recorded points as a calibration (sorted by angle), or why they are not one.
    public func calibration() -> Result<Calibration, CalibrationProblem> {
        Calibration.make(points: points.map { ($0.angleDeg, $0.pulseMicroseconds) }, inverted: false)
    }

    private mutating func move(to wanted: Double) -> Action {
        let range = allowed
        let target = min(max(wanted, range.lowerBound), range.upperBound)
        if target != wanted {
            message =
                target == window.lowerBound || target == window.upperBound
                ? "at the edge of the range shown (w widens it)" : "at the marked end of travel"
        }
        guard target != pulseMicroseconds else { return .none }
        pulseMicroseconds = target
        return .move(toMicroseconds: target)
    }

    private mutating func typing(_ key: Key) -> Action {
        guard var text = typed else { return .none }
        switch key {
        case .text(let c):
            if text.count < 12 { text.append(c) }
            typed = text
        case .backspace:
            if !text.isEmpty { text.removeLast() }
            typed = text
        case .cancel:
            typed = nil
        case .enter:
            typed = nil
            guard let angle = Double(text), angle.isFinite, Bounds.calibrationAngleDegrees.contains(angle) else {
                message =
                    "\"\(text)\" is not an angle; valid: \(format(Bounds.calibrationAngleDegrees.lowerBound))…\(format(Bounds.calibrationAngleDegrees.upperBound))°"
                return .none
            }
            // One point per pulse and per angle: a second reading replaces the first.
            points.removeAll { $0.pulseMicroseconds == pulseMicroseconds || $0.angleDeg == angle }
            points.append(Point(angleDeg: angle, pulseMicroseconds: pulseMicroseconds))
            message = "recorded \(format(angle))° at \(format(pulseMicroseconds)) µs (\(points.count) point\(points.count == 1 ? "" : "s"))"
        default:
            break
        }
        return .none
    }

    /// The line shown on screen after every key.
    public var statusLine: String {
        var parts = ["pulse \(format(pulseMicroseconds)) µs", "range \(format(window.lowerBound))…\(format(window.upperBound)) µs"]
        if lowEnd != nil || highEnd != nil {
            parts.append("travel \(lowEnd.map { format($0) } ?? "?")…\(highEnd.map { format($0) } ?? "?") µs")
        }
        if let deadbandStart {
            parts.append("deadband search from \(format(deadbandStart)) µs: +\(format(abs(pulseMicroseconds - deadbandStart))) µs")
        } else if let deadbandMicroseconds {
            parts.append("deadband \(format(deadbandMicroseconds)) µs")
        }
        parts.append("\(points.count) point\(points.count == 1 ? "" : "s")")
        if let typed { parts.append("angle here: \(typed)_") }
        return parts.joined(separator: " · ")
    }

    public static let help =
        "←/→ ±\(format(fineStepMicroseconds)) µs · ↑/↓ ±\(format(coarseStepMicroseconds)) µs · ,/. ±1 µs · w widen the range · [ ] mark the low/high end of travel · d deadband · a type the angle here · x delete the last point · s save · q quit"
}

extension ServoCalibrator.Key {
    /// Decodes a raw terminal's bytes into keys (`TerminalKeys`); keeps a half-read escape
    /// sequence.
    public struct Decoder: Sendable {
        private var keys = TerminalKeys()
        public init() {}

        /// Feeds one byte; returns the key it completes, if any. `typing`: digits, `-` and
        /// `.` are the typed angle's text, not steps.
        public mutating func feed(_ byte: UInt8, typing: Bool) -> ServoCalibrator.Key? {
            // Typing an angle, Esc cancels at once (arrows are not read then).
            if typing {
                keys.reset()
                if byte == 0x1B { return .cancel }
            }
            var result: ServoCalibrator.Key?
            for key in keys.feed(byte) {
                switch key {
                case .arrow(0): result = .step(-ServoCalibrator.fineStepMicroseconds)
                case .arrow(1): result = .step(ServoCalibrator.fineStepMicroseconds)
                case .arrow(2): result = .step(ServoCalibrator.coarseStepMicroseconds)
                case .arrow(_): result = .step(-ServoCalibrator.coarseStepMicroseconds)
                // A lone Esc cancels a deadband search; the key after it is read as itself.
                case .escape: result = .cancel
                case .byte(let byte): result = Self.key(byte, typing: typing) ?? result
                }
            }
            return result
        }

        private static func key(_ byte: UInt8, typing: Bool) -> ServoCalibrator.Key? {
            if typing {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "+"):
                    return .text(Character(Unicode.Scalar(byte)))
                case 0x7F, 0x08: return .backspace
                case 0x0D, 0x0A: return .enter
                default: return nil
                }
            }
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "<"): return .step(-1)
            case UInt8(ascii: "."), UInt8(ascii: ">"): return .step(1)
            case UInt8(ascii: "w"), UInt8(ascii: "W"): return .widen
            case UInt8(ascii: "["): return .markLow
            case UInt8(ascii: "]"): return .markHigh
            case UInt8(ascii: "d"), UInt8(ascii: "D"): return .deadband
            case UInt8(ascii: "a"), UInt8(ascii: "A"): return .typeAngle
            case UInt8(ascii: "x"), UInt8(ascii: "X"), 0x7F, 0x08: return .deleteLast
            case UInt8(ascii: "s"), UInt8(ascii: "S"): return .save
            case UInt8(ascii: "q"), UInt8(ascii: "Q"): return .quit
            default: return nil
            }
        }
    }
}

import Dispatch
import Glibc
import Logging
import RigCore
import RigFormat
import RigRuntime
import Synchronization

/// `rig calibrate servo`'s gamepad: the same device layer as `rig jog` (`GamepadService`:
/// found by capability, read on its own thread, reconnected after an unplug) with a layout
/// of its own, turned into the calibrator's keys.
///
/// - d-pad ←/→ ∓/± the fine step, ↑/↓ ± the coarse step; LB/RB ∓/± 1 µs;
/// - the left stick held sideways moves continuously, up to `stickMicrosecondsPerSecond`
///   at full push (past the jog layout's deadzone);
/// - A records a point: the next angle of `angles` (a printed dial's marks), or, with none
///   left, starts typing it on the keyboard;
/// - B deletes the last point (A records its angle again), X starts and ends the deadband search, Y widens the range,
///   L3/R3 (the sticks pressed) mark the low/high end of travel, Start saves, Back quits.
public final class GamepadCalibrationKeys: CalibrationKeySource, @unchecked Sendable {
    public static let stickMicrosecondsPerSecond = 200.0
    /// How often the snapshot is read (the stick's moves are this fine in time).
    static let pollMilliseconds: Int32 = 20

    private let input = GamepadInput()
    private let service: GamepadService
    private let deadzone: Double
    private let angles: [Double]
    /// The next of `angles` A records.
    private let nextAngle = Mutex(0)
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let started = Atomic<Bool>(false)

    /// - Parameters:
    ///   - config: the rig's jog layout (its deadzone and any `sdlMapping` for the pad).
    ///   - angles: the angles A records in turn (degrees).
    public init(finder: GamepadFinder, config: JogConfig, angles: [Double], logger: Logger) {
        service = GamepadService(finder: finder, config: config, input: input, logger: logger)
        deadzone = config.deadzone
        self.angles = angles
    }

    public var help: String {
        "gamepad: d-pad ←/→ ±\(format(ServoCalibrator.fineStepMicroseconds)) µs, ↑/↓ ±\(format(ServoCalibrator.coarseStepMicroseconds)) µs · LB/RB ±1 µs · left stick moves (up to \(format(Self.stickMicrosecondsPerSecond)) µs/s) · A record "
            + (angles.isEmpty ? "(type the angle)" : "the next angle of \(angles.map { format($0) + "°" }.joined(separator: ", "))")
            + " · B delete the last · X deadband · Y widen · L3/R3 mark the low/high end · Start save · Back quit"
    }

    public var status: String? {
        guard !angles.isEmpty else { return nil }
        let next = nextAngle.withLock { $0 }
        return next < angles.count ? "A records \(format(angles[next]))°" : "A: type the angle"
    }

    public func start(_ deliver: @escaping @Sendable (ServoCalibrator.Key) -> Bool) {
        started.store(true, ordering: .releasing)
        service.start()
        SystemThread.start(name: "rig-cal-pad") { [self] in
            run(deliver)
            finished.signal()
        }
    }

    public func stop() {
        guard started.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopRequested.store(true, ordering: .releasing)
        finished.wait()
        service.stop()
    }

    private func run(_ deliver: @Sendable (ServoCalibrator.Key) -> Bool) {
        var last = input.snapshot
        var generation = last.generation
        var carried = 0.0
        let dt = Double(Self.pollMilliseconds) / 1000
        while !stopRequested.load(ordering: .acquiring) {
            _ = poll(nil, 0, Self.pollMilliseconds)
            let now = input.snapshot
            // A pad (re)connected: what it held meanwhile is not pressed now.
            if now.generation != generation {
                generation = now.generation
                last = now
                carried = 0
                continue
            }
            for key in keys(from: last, to: now) where deliver(key) { return }
            last = now
            // The stick: µs per poll in proportion past the deadzone, whole µs sent.
            let x = now.gamepadConnected ? now.sticks[0] : 0
            let past = (abs(x) - max(deadzone, now.stickFlat)) / (1 - max(deadzone, now.stickFlat))
            if past > 0 {
                carried += (x < 0 ? -1 : 1) * min(past, 1) * Self.stickMicrosecondsPerSecond * dt
                let whole = carried.rounded(.towardZero)
                if whole != 0 {
                    carried -= whole
                    if deliver(.step(whole)) { return }
                }
            } else {
                carried = 0
            }
        }
    }

    /// The keys pressed between two snapshots, in a fixed order.
    func keys(from old: GamepadSnapshot, to new: GamepadSnapshot) -> [ServoCalibrator.Key] {
        var out: [ServoCalibrator.Key] = []
        // D-pad: up, down, left, right.
        let dpad: [ServoCalibrator.Key] = [
            .step(ServoCalibrator.coarseStepMicroseconds), .step(-ServoCalibrator.coarseStepMicroseconds),
            .step(-ServoCalibrator.fineStepMicroseconds), .step(ServoCalibrator.fineStepMicroseconds),
        ]
        for i in 0..<4 {
            for _ in 0..<Int(min(new.nudges[i] &- old.nudges[i], 50)) { out.append(dpad[i]) }
        }
        for (i, button) in GamepadLayout.buttonOrder.enumerated() where i < 16 {
            for _ in 0..<Int(min(new.buttonPresses[i] &- old.buttonPresses[i], 50)) { out += keys(for: button) }
        }
        return out
    }

    private func keys(for button: JogConfig.Button) -> [ServoCalibrator.Key] {
        switch button {
        case .a:
            let angle: Double? = nextAngle.withLock { next in
                guard next < angles.count else { return nil }
                defer { next += 1 }
                return angles[next]
            }
            guard let angle else { return [.typeAngle] }
            return [.typeAngle] + format(angle).map { .text($0) } + [.enter]
        case .b:
            // The deleted point's angle is A's again.
            nextAngle.withLock { $0 = max($0 - 1, 0) }
            return [.deleteLast]
        case .x: return [.deadband]
        case .y: return [.widen]
        case .leftshoulder: return [.step(-1)]
        case .rightshoulder: return [.step(1)]
        case .leftstick: return [.markLow]
        case .rightstick: return [.markHigh]
        case .start: return [.save]
        case .back: return [.quit]
        case .guide: return []
        }
    }
}

import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigRuntime
import Synchronization

/// Keeps a gamepad connected, on its own thread: scans until one appears, reads it
/// (poll with a 100 ms timeout), probes it when it is quiet (a held stick sends
/// nothing), and after an unplug scans again. Everything it learns goes to the
/// `GamepadInput`; the jog source stops the rig when the input vanishes.
public final class GamepadService: @unchecked Sendable {
    private let finder: GamepadFinder
    private let config: JogConfig
    private let input: GamepadInput
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// Milliseconds between scans while no gamepad is connected.
    public static let scanIntervalMilliseconds: Int32 = 500
    /// Milliseconds of silence before probing the device.
    public static let quietMilliseconds: Int32 = 100

    public init(finder: GamepadFinder, config: JogConfig, input: GamepadInput, logger: Logger) {
        self.finder = finder
        self.config = config
        self.input = input
        self.logger = logger
    }

    public func start() {
        started = true
        SystemThread.start(name: "rig-gamepad") { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops the thread and closes the device (returns within about 100 ms).
    public func stop() {
        guard started else { return }
        stopRequested.store(true, ordering: .relaxed)
        finished.wait()
        started = false
    }

    private func run() {
        var reader: GamepadReader?
        var lastProblems: [String] = []
        var announced = false
        while !stopRequested.load(ordering: .relaxed) {
            guard let current = reader else {
                let (found, problems) = finder.find()
                if let found {
                    do {
                        let r = try GamepadReader(path: found.path, fd: found.fd, control: finder.control, config: config, input: input)
                        logger.notice("gamepad: \(r.name) (\(found.path))")
                        reader = r
                        announced = false
                        continue
                    } catch {
                        try? found.fd.close()
                        logger.warning("gamepad: \(found.path): \(error)")
                    }
                }
                if !announced || problems != lastProblems {
                    logger.notice("gamepad: waiting for a gamepad\(finder.device.map { " at \($0)" } ?? "")…")
                    for problem in problems { logger.warning("gamepad: \(problem)") }
                    announced = true
                    lastProblems = problems
                }
                _ = poll(nil, 0, Self.scanIntervalMilliseconds)
                continue
            }
            var pfd = pollfd(fd: current.fd.rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Self.quietMilliseconds)
            var lost: String?
            if ready > 0 {
                if case .deviceGone(let why) = current.readAvailable() { lost = why }
            } else if ready == 0 {
                if !current.probe() { lost = "stopped answering" }
            }
            if let lost {
                logger.warning("gamepad: \(current.name) lost (\(lost)); stopping the rig and waiting for it to come back")
                current.close()
                reader = nil
            }
        }
        reader?.close()
    }
}

import Dispatch
import FoundationEssentials
import Glibc
import RigRuntime
import Synchronization

/// The keyboard fallback: reads the terminal on its own thread and adds key presses to
/// the `GamepadInput` (arrows as short moves that autorepeat keeps going, actions as
/// presses). Raw mode is restored when it stops.
public final class KeyboardService: @unchecked Sendable {
    private let input: GamepadInput
    private let raw: TerminalRawMode
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// Nil when stdin is not a terminal.
    public init?(input: GamepadInput) {
        guard let raw = TerminalRawMode() else { return nil }
        self.raw = raw
        self.input = input
    }

    public func start() {
        started = true
        input.update { $0.keyboardActive = true }
        SystemThread.start(name: "rig-keyboard") { [self] in
            run()
            finished.signal()
        }
    }

    /// Stops reading and restores the terminal.
    public func stop() {
        if started {
            stopRequested.store(true, ordering: .relaxed)
            finished.wait()
            started = false
        }
        input.update { $0.keyboardActive = false }
        raw.restore()
    }

    private func run() {
        var decoder = KeyDecoder()
        var buffer = [UInt8](repeating: 0, count: 64)
        while !stopRequested.load(ordering: .relaxed) {
            var pfd = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count <= 0 {
                if count == 0 { return }  // stdin closed
                continue
            }
            for i in 0..<count {
                guard let key = decoder.feed(buffer[i]) else { continue }
                input.update { s in
                    switch key {
                    case .arrow(let k): s.pulses[k] &+= 1
                    case .action(let action): s.press(action)
                    }
                    s.signsOfLife &+= 1
                }
            }
        }
    }
}

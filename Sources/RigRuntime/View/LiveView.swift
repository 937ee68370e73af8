import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import Synchronization

/// The terminal view of a running rig: a few lines redrawn in place on a TTY (axis
/// positions, step k/N or time, a progress bar with ETA), plain log lines otherwise.
public final class LiveView: @unchecked Sendable {
    public let isTTY: Bool
    private let axes: [Axis]
    private let header: String
    private let lock = Mutex<Void>(())
    private var drawnLines = 0
    /// The live lines last drawn, redrawn under each log line so they never flicker away.
    private var liveText = ""
    private var lastPlainLine = -Double.infinity
    private let plainInterval: Double
    private let out: @Sendable (String) -> Void

    public init(
        isTTY: Bool, axes: [Axis], header: String, plainIntervalSeconds: Double = 5,
        out: @escaping @Sendable (String) -> Void = { StandardStreams.out($0) }
    ) {
        self.isTTY = isTTY
        self.axes = axes
        self.header = header
        self.plainInterval = plainIntervalSeconds
        self.out = out
    }

    /// True when stdout is a terminal (and TERM is not "dumb").
    public static var stdoutIsTTY: Bool {
        isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    /// Prints a line above the live lines (or as a plain line).
    public func log(_ line: String) {
        lock.withLock { _ in
            out(clearLive() + line + "\n" + liveText)
        }
    }

    /// Redraws the live lines from a status snapshot.
    public func render(_ status: LoopStatus, outputStatus: String?) {
        lock.withLock { _ in
            let lines = Self.lines(status, axes: axes, outputStatus: outputStatus)
            if isTTY {
                var text = "\u{1B}[1m" + header + "\u{1B}[0m\n"
                for line in lines { text += "\u{1B}[2K" + line + "\n" }
                out(clearLive() + text)
                liveText = text
                drawnLines = lines.count + 1
            } else if status.progress.elapsedSeconds - lastPlainLine >= plainInterval {
                lastPlainLine = status.progress.elapsedSeconds
                out(lines.joined(separator: "  ·  ") + "\n")
            }
        }
    }

    /// Leaves the last drawn lines on screen.
    public func finish() {
        lock.withLock { _ in
            drawnLines = 0
            liveText = ""
        }
    }

    private func clearLive() -> String {
        guard isTTY, drawnLines > 0 else { return "" }
        return String(repeating: "\u{1B}[1A\u{1B}[2K", count: drawnLines) + "\r"
    }

    /// The live lines for a status (pure: tested without a terminal).
    public static func lines(_ status: LoopStatus, axes: [Axis], outputStatus: String?) -> [String] {
        let p = status.progress
        var first: String
        var fraction: Double?
        var eta: Double?
        if let step = p.step, let count = p.stepCount {
            first = "step \(step)/\(count)  \(p.phase)"
            // Step 0: before the first (a follower waiting for its group's first order).
            fraction = Double(max(step - 1, 0)) / Double(max(count, 1))
            if step > 1 { eta = p.elapsedSeconds / Double(step - 1) * Double(count - step + 1) }
        } else if let total = p.totalSeconds, total > 0 {
            let t = min(p.elapsedSeconds, total)
            first = "\(fixed(t, 1))/\(fixed(total, 1)) s  \(p.phase)"
            fraction = t / total
            eta = total - t
        } else {
            first = "\(fixed(p.elapsedSeconds, 1)) s  \(p.phase)"
        }
        if let fraction {
            let width = 24
            // NaN passes through min/max: clamp only a finite fraction, or Int() traps.
            let filled = fraction.isFinite ? Int((min(max(fraction, 0), 1) * Double(width)).rounded()) : 0
            first += "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            first += percent(fraction)
            if let eta { first += "  ETA \(clock(eta))" }
        }
        if let outputStatus { first += "  ·  \(outputStatus)" }
        let axesLine = axes.indices.map { i in
            "\(axes[i].name) \(fixed(status.positions[i], 1))\(axes[i].unit)"
        }.joined(separator: "   ")
        return [first, axesLine]
    }

    static func clock(_ seconds: Double) -> String {
        // Clamped in Double first: an ETA from a zero or huge rate must not trap.
        guard seconds.isFinite else { return "--:--" }
        let s = Int(min(max(seconds.rounded(), 0), 359_999_999))
        return "\(s / 60):" + (s % 60 < 10 ? "0" : "") + "\(s % 60)"
    }
}

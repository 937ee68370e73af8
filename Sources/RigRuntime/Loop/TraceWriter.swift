import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import SystemPackage

/// One emitted value of one channel.
public struct TraceRow: Sendable, Equatable {
    public var timeSeconds: Double
    public var axis: Int32
    public var pulseMicroseconds: Double
    /// Wall-clock seconds since the loop started when the frame was sent (the timeline,
    /// `timeSeconds`, pauses through a stall; this does not).
    public var wallSeconds: Double
    /// Where the camera on the axis pointed, when the output models it (the simulator's
    /// payload); NaN otherwise.
    public var cameraDegrees: Double

    public init(timeSeconds: Double, axis: Int32, pulseMicroseconds: Double, wallSeconds: Double? = nil, cameraDegrees: Double = .nan) {
        self.timeSeconds = timeSeconds
        self.axis = axis
        self.pulseMicroseconds = pulseMicroseconds
        self.wallSeconds = wallSeconds ?? timeSeconds
        self.cameraDegrees = cameraDegrees
    }
}

/// Writes `--trace FILE.csv`: one row per channel per emitted frame,
/// `time_s,axis,channel,pulse_us,position_deg,wall_s,camera_deg` (`time_s` on the
/// program's timeline, `wall_s` on the monotonic clock since the loop began, `camera_deg`
/// where the simulated camera pointed — the payload ringing on the horn — or empty when
/// the output does not model it). The loop pushes rows into a ring without
/// blocking; a writer thread formats and writes them.
public final class TraceWriter: @unchecked Sendable {
    public static let header = "time_s,axis,channel,pulse_us,position_deg,wall_s,camera_deg\n"
    private let ring: SPSCRing<TraceRow>
    private let fd: FileDescriptor
    private let axes: [Axis]
    private let pwmPeriodMicroseconds: Double
    private let done = DispatchSemaphore(value: 0)
    private let closing = OneWayFlag()
    private var writeError: Errno?

    /// Creates (truncates) `path` and starts the writer thread. Refuses anything but a
    /// regular file (see `OutputPath.check`, which callers run first for a clear message).
    public init(path: String, axes: [Axis], pwmPeriodMicroseconds: Double, capacity: Int = 1 << 16) throws {
        // Non-blocking first: a FIFO put there after the check fails or is refused below
        // instead of blocking until someone reads it. Truncated only once known regular.
        let opened = try FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .closeOnExec, .nonBlocking],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
        var st = stat()
        guard fstat(opened.rawValue, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            try? opened.close()
            throw OutputPathError(option: "--trace", path: path, problem: "is not a regular file; give a regular file")
        }
        _ = fcntl(opened.rawValue, F_SETFL, fcntl(opened.rawValue, F_GETFL) & ~O_NONBLOCK)
        _ = ftruncate(opened.rawValue, 0)
        fd = opened
        self.axes = axes
        self.pwmPeriodMicroseconds = pwmPeriodMicroseconds
        ring = SPSCRing(capacity: capacity)
        try fd.writeAll(Array(Self.header.utf8))
        SystemThread.start(name: "rig-trace") { [self] in drainLoop() }
    }

    /// Loop side: never blocks; a full ring drops the row and counts it.
    @inline(__always)
    public func push(_ row: TraceRow) {
        ring.push(row)
    }

    public var droppedRows: Int { ring.droppedCount }

    /// Writes what is left and closes the file.
    public func close() throws {
        closing.set()
        done.wait()
        try fd.close()
        if let writeError { throw writeError }
    }

    private func drainLoop() {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        while true {
            let last = closing.isSet
            while let row = ring.pop() {
                append(row, to: &buffer)
                if buffer.count > 60_000 { flush(&buffer) }
            }
            flush(&buffer)
            if last { break }
            SystemThread.sleep(seconds: 0.02)
        }
        done.signal()
    }

    private func flush(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        if writeError == nil {
            do { try fd.writeAll(buffer) } catch let e as Errno { writeError = e } catch {}
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private func append(_ row: TraceRow, to buffer: inout [UInt8]) {
        let axis = axes[Int(row.axis)]
        let position: Double
        switch axis.kind {
        case .servo: position = axis.calibration?.angle(forPulseMicroseconds: row.pulseMicroseconds) ?? 0
        case .pwm: position = row.pulseMicroseconds / pwmPeriodMicroseconds * 100
        }
        let line =
            "\(fixed(row.timeSeconds, 4)),\(axis.name),\(axis.channel),\(fixed(row.pulseMicroseconds, 3)),\(fixed(position, 4)),\(fixed(row.wallSeconds, 4)),\(row.cameraDegrees.isNaN ? "" : fixed(row.cameraDegrees, 4))\n"
        buffer.append(contentsOf: line.utf8)
    }
}

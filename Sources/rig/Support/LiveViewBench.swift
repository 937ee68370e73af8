import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import Synchronization

// The parts of `rig bench liveview`: a viewer of the MJPEG stream on a thread of its own,
// the floor (the same simulated source read with no server), and the figures.

/// One frame as a viewer got it: its number, when the camera captured it (its stamp) and
/// when the viewer had it whole, both on CLOCK_MONOTONIC (one machine).
struct BenchViewedFrame: Sendable {
    var number: Int
    var capturedNs: UInt64
    var receivedNs: UInt64
    var bytes: Int

    var latencyMs: Double { Double(Int64(bitPattern: receivedNs &- capturedNs)) / 1e6 }
}

/// A viewer of `GET /api/liveview` on a thread of its own, as a page's `<img>` plays it:
/// reads the reply's head, then each part (its head, then Content-Length bytes of JPEG) and
/// notes the frame. A slow viewer (`pause`) waits after each frame before it reads on, with
/// a small receive buffer, as a phone on weak Wi-Fi would.
final class BenchViewer: Sendable {
    private struct State {
        var frames: [BenchViewedFrame] = []
        var ended: String?
    }

    let name: String
    private let fd: Int32
    private let pause: Double
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)
    private let onFrame: (@Sendable (BenchViewedFrame) -> Void)?

    /// Connects to 127.0.0.1:`port` and starts reading.
    /// - Parameters:
    ///   - pause: seconds to wait after each frame (0: reads as fast as frames come).
    ///   - receiveBuffer: SO_RCVBUF for the socket (nil: the kernel's).
    ///   - onFrame: called on the viewer's thread with each frame.
    init(port: Int, name: String, pause: Double = 0, receiveBuffer: Int32? = nil, onFrame: (@Sendable (BenchViewedFrame) -> Void)? = nil)
        throws(BenchError)
    {
        guard case .success(let fd) = LoopbackTCP.connect(port: port, receiveTimeoutSeconds: 30) else {
            throw BenchError("viewer \(name) could not connect to rig serve on port \(port)")
        }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        guard BenchServe.send(fd, "GET /api/liveview HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Rig-Client: bench \(name)\r\n\r\n") else {
            close(fd)
            throw BenchError("viewer \(name) could not ask for the live view")
        }
        self.fd = fd
        self.name = name
        self.pause = pause
        self.onFrame = onFrame
        SystemThread.start(name: "rig-bench-viewer") { [self] in
            let why = read()
            state.withLock { $0.ended = why }
            finished.signal()
        }
    }

    /// The frames so far.
    var frames: [BenchViewedFrame] { state.withLock { $0.frames } }
    /// Why the stream ended (nil while it runs).
    var ended: String? { state.withLock { $0.ended } }

    /// Closes the connection and waits (at most 5 s) for the thread to notice.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        _ = finished.wait(timeout: .now() + 5)
        close(fd)
    }

    /// Reads until the stream ends; why it ended.
    private func read() -> String {
        var buffer: [UInt8] = []
        var start = 0
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        /// Reads until `count` bytes from `start` are buffered.
        func fill(_ count: Int) -> Bool {
            while buffer.count - start < count {
                if start > 1 << 20 || (start > 0 && start == buffer.count) {
                    buffer.removeFirst(start)
                    start = 0
                }
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { return false }
                buffer.append(contentsOf: chunk[0..<n])
            }
            return true
        }
        /// The text up to the next blank line (consumed), nil at the end.
        func head() -> String? {
            // Bytes after `start` already searched (`fill` may move what is buffered).
            var searched = 0
            while true {
                var i = start + max(0, searched - 3)
                while i + 3 < buffer.count {
                    if buffer[i] == 13, buffer[i + 1] == 10, buffer[i + 2] == 13, buffer[i + 3] == 10 {
                        let text = String(decoding: buffer[start..<i], as: UTF8.self)
                        start = i + 4
                        return text
                    }
                    i += 1
                }
                searched = buffer.count - start
                guard fill(searched + 1) else { return nil }
            }
        }
        guard let reply = head() else { return "no reply" }
        guard reply.hasPrefix("HTTP/1.1 200") else { return "refused: \(reply.prefix(200))" }
        while true {
            guard let part = head() else { return "the stream ended" }
            var length: Int?
            var number: Int?
            for line in part.split(separator: "\r\n") {
                let lower = line.lowercased()
                if lower.hasPrefix("content-length:") { length = Int(line.dropFirst(15).trimmed()) }
                if lower.hasPrefix("x-rig-frame:") { number = Int(line.dropFirst(12).trimmed()) }
            }
            guard let length, let number, fill(length + 2) else { return "a part without its length or frame number: \(part.prefix(200))" }
            let received = MonotonicClock().now()
            let jpeg = Array(buffer[start..<(start + length)])
            start += length + 2
            guard let stamp = LiveViewFrame.readStamp(jpeg) else { return "frame \(number) has no stamp" }
            let frame = BenchViewedFrame(number: number, capturedNs: stamp.capturedNanoseconds, receivedNs: received, bytes: length)
            state.withLock { $0.frames.append(frame) }
            onFrame?(frame)
            if pause > 0 { SystemThread.sleep(seconds: pause) }
        }
    }
}

/// Figures of a set of values: nearest-rank percentiles.
struct BenchSpread {
    var values: [Double]

    var p50: Double { GroupFigures.percentile(values, 0.5) }
    var p95: Double { GroupFigures.percentile(values, 0.95) }
    var max: Double { values.max() ?? .nan }

    var json: String {
        "{\"p50\": \(benchNumber(p50)), \"p95\": \(benchNumber(p95)), \"max\": \(benchNumber(max)), \"count\": \(values.count)}"
    }

    func text(_ digits: Int = 1, unit: String = " ms") -> String {
        values.isEmpty ? "—" : "p50 \(fixed(p50, digits)) / p95 \(fixed(p95, digits)) / max \(fixed(max, digits))\(unit)"
    }
}

/// A number for the bench's JSON: null for NaN or infinity.
func benchNumber(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "null" }
    return number(value)
}

/// What viewers received over a measured window.
struct BenchViewerFigures {
    var viewers: Int
    var seconds: Double
    /// Frames the camera made per second in the window (from the frame numbers and capture times).
    var sourceFPS: Double
    /// Each viewer's frames per second.
    var deliveredFPS: [Double]
    var latencyMs: BenchSpread
    /// Frame numbers a viewer never got, over all viewers.
    var skipped: Int
    var frameBytes: Int
    /// Shares of one core over the window: the whole `rig serve`, and its simulated camera's
    /// drawing thread (the camera's own work, not the server's).
    var serveCPU: Double
    var drawingCPU: Double

    /// Frames of every viewer received from `from` to `to` (CLOCK_MONOTONIC ns).
    init(viewers: [BenchViewer], from: UInt64, to: UInt64, serveCPU: Double, drawingCPU: Double) {
        self.viewers = viewers.count
        let span = Double(to - from) / 1e9
        seconds = span
        let windows = viewers.map { $0.frames.filter { $0.receivedNs >= from && $0.receivedNs < to } }
        let all = windows.flatMap { $0 }
        if let first = all.min(by: { $0.number < $1.number }), let last = all.max(by: { $0.number < $1.number }), last.capturedNs > first.capturedNs {
            sourceFPS = Double(last.number - first.number) / (Double(last.capturedNs - first.capturedNs) / 1e9)
        } else {
            sourceFPS = .nan
        }
        deliveredFPS = windows.map { Double($0.count) / span }
        latencyMs = BenchSpread(values: all.map(\.latencyMs))
        skipped = windows.reduce(0) { sum, frames in
            zip(frames, frames.dropFirst()).reduce(sum) { $0 + max(0, $1.1.number - $1.0.number - 1) }
        }
        frameBytes = all.isEmpty ? 0 : all.map(\.bytes).reduce(0, +) / all.count
        self.serveCPU = serveCPU
        self.drawingCPU = drawingCPU
    }

    var minDelivered: Double { deliveredFPS.min() ?? .nan }
    var ratio: Double { minDelivered / sourceFPS }

    var json: String {
        "{\"viewers\": \(viewers), \"seconds\": \(benchNumber(seconds)), \"source_fps\": \(benchNumber(sourceFPS)), "
            + "\"delivered_fps\": {\"min\": \(benchNumber(minDelivered)), \"mean\": \(benchNumber(deliveredFPS.reduce(0, +) / Double(max(1, viewers))))}, "
            + "\"delivered_ratio_min\": \(benchNumber(ratio)), \"skipped\": \(skipped), \"latency_ms\": \(latencyMs.json), \"frame_bytes\": \(frameBytes), "
            + "\"serve_core_percent\": \(benchNumber(serveCPU * 100)), \"drawing_core_percent\": \(benchNumber(drawingCPU * 100)), "
            + "\"serving_core_percent\": \(benchNumber((serveCPU - drawingCPU) * 100))}"
    }

    var line: String {
        "\(String(viewers).leftPadded(to: 3)) viewers: source \(fixed(sourceFPS, 2)) frames/s of \(frameBytes / 1024) KiB, each viewer ≥ \(fixed(minDelivered, 2)) (\(fixed(ratio, 3))×), "
            + "\(skipped) skipped; captured → received \(latencyMs.text()); rig serve \(percent(serveCPU, digits: 1)) of a core "
            + "(drawing \(percent(drawingCPU, digits: 1)), the rest \(percent(serveCPU - drawingCPU, digits: 1)))"
    }
}

/// The floor: the simulated camera's live view read in this process by a plain loop (one
/// slot, no server, no socket), as fast as it comes.
enum LiveViewFloor {
    struct Figures {
        var fps: Double
        var latencyMs: BenchSpread
        var drawingCPU: Double

        var json: String {
            "{\"fps\": \(benchNumber(fps)), \"latency_ms\": \(latencyMs.json), \"drawing_core_percent\": \(benchNumber(drawingCPU * 100))}"
        }
    }

    static func run(preview: SimPreviewConfig, seconds: Double) throws(BenchError) -> Figures {
        let camera = SimCamera(preview: preview, axisNames: ["pan", "tilt"], restPose: [0, 0])
        defer { camera.close() }
        guard let slot = camera.liveView.join() else { throw BenchError("the simulated camera has no live view (a bug in rig bench)") }
        // Warm up (the first frame is drawn; later ones are the same pose), then measure.
        _ = slot.next(within: 5)
        let clock = MonotonicClock()
        let end = clock.now() + UInt64(seconds * 1e9)
        let cpuBefore = BenchChild.threadCPUSeconds(pid: getpid(), named: "rig-sim-liveview")
        let began = clock.now()
        var latencies: [Double] = []
        while clock.now() < end {
            guard let frame = slot.next(within: 5) else { throw BenchError("the simulated camera stopped sending frames") }
            latencies.append(Double(clock.now() - frame.capturedNanoseconds) / 1e6)
        }
        let elapsed = Double(clock.now() - began) / 1e9
        let cpu = (BenchChild.threadCPUSeconds(pid: getpid(), named: "rig-sim-liveview") - cpuBefore) / elapsed
        return Figures(fps: Double(latencies.count) / elapsed, latencyMs: BenchSpread(values: latencies), drawingCPU: cpu)
    }
}

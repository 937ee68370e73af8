import Foundation

/// Everything a child process writes into a pipe, read on a thread of its own from the
/// start (so a full pipe never stalls the child) and readable from any thread while it
/// comes in.
public final class PipeCollector: @unchecked Sendable {
    private let lock = NSCondition()
    private var bytes = Data()
    private var finished = false
    private let reading = DispatchGroup()

    /// Starts reading `pipe` until its write end is closed (by every holder: start the
    /// child first or close the parent's copy, or the end never comes).
    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        reading.enter()
        // A thread of its own, not a GCD worker: a blocking read holds its thread until the
        // writer closes, and GCD's pool is as small as the machine (2 threads here), so a
        // test with a broker and a few processes would starve every later collector.
        let fd = handle.fileDescriptor
        let thread = Thread { [self] in
            // read(2), not FileHandle.availableData, which traps on an error: a descriptor
            // closed under it (seen twice in loaded full runs, "Bad file descriptor", cause
            // not found) then ends this collector with a note instead of the whole run.
            var buffer = [UInt8](repeating: 0, count: 8192)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    if count < 0 {
                        let note = "\n[pipe-collector: read failed: \(String(cString: strerror(errno)))]\n"
                        lock.withLock { bytes.append(contentsOf: Array(note.utf8)) }
                    }
                    break
                }
                lock.withLock {
                    bytes.append(contentsOf: buffer[0..<count])
                    lock.broadcast()
                }
            }
            withExtendedLifetime(handle) {}
            lock.withLock {
                finished = true
                lock.broadcast()
            }
            reading.leave()
        }
        thread.name = "pipe-collector"
        thread.start()
    }

    /// What arrived so far.
    public var data: Data { lock.withLock { bytes } }
    public var text: String { String(decoding: data, as: UTF8.self) }

    /// How many times `needle` occurs in what arrived so far.
    public func count(_ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// Waits until what arrived contains `needle` (woken by each chunk, not polled), the
    /// writer closed its end, or `seconds` passed; true when it is there.
    public func wait(for needle: String, within seconds: Double = 30) -> Bool {
        wait(within: seconds) { $0.contains(needle) }
    }

    /// Waits until `holds` is true of what arrived (checked on each chunk), the writer
    /// closed its end, or `seconds` passed; whether it held.
    public func wait(within seconds: Double = 30, until holds: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        return lock.withLock {
            while true {
                if holds(String(decoding: bytes, as: UTF8.self)) { return true }
                if finished || !lock.wait(until: deadline) { return holds(String(decoding: bytes, as: UTF8.self)) }
            }
        }
    }

    /// The first whole line (ended by a newline) containing `needle`, waiting for it as
    /// `wait(for:within:)` does; nil when none came.
    public func line(containing needle: String, within seconds: Double = 30) -> String? {
        func find(_ text: String) -> String? {
            text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first { $0.contains(needle) }.map(String.init)
        }
        var found: String?
        _ = wait(within: seconds) {
            found = find($0)
            return found != nil
        }
        return found
    }

    /// The writer closed its end and everything it wrote was read.
    public var ended: Bool { reading.wait(timeout: .now()) == .success }

    /// Waits at most `seconds` for the end (see `ended`); true when it came.
    public func waitForEnd(within seconds: Double) -> Bool {
        reading.wait(timeout: .now() + seconds) == .success
    }

    /// Waits for the end (see `ended`) and returns everything that was written.
    @discardableResult
    public func waitForEnd() -> Data {
        reading.wait()
        return data
    }
}

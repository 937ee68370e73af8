import Foundation

/// Everything a child process writes into a pipe, read on a thread of its own from the
/// start (so a full pipe never stalls the child) and readable from any thread while it
/// comes in.
public final class PipeCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()
    private let reading = DispatchGroup()

    /// Starts reading `pipe` until its write end is closed (by every holder: start the
    /// child first or close the parent's copy, or the end never comes).
    public init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        reading.enter()
        DispatchQueue.global().async { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { bytes.append(chunk) }
            }
            reading.leave()
        }
    }

    /// What arrived so far.
    public var data: Data { lock.withLock { bytes } }
    public var text: String { String(decoding: data, as: UTF8.self) }

    /// How many times `needle` occurs in what arrived so far.
    public func count(_ needle: String) -> Int { text.components(separatedBy: needle).count - 1 }

    /// The writer closed its end and everything it wrote was read.
    public var ended: Bool { reading.wait(timeout: .now()) == .success }

    /// Waits for the end (see `ended`) and returns everything that was written.
    @discardableResult
    public func waitForEnd() -> Data {
        reading.wait()
        return data
    }
}

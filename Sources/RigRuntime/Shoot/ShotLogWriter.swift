import FoundationEssentials
import Glibc
import RigCore
import SystemPackage

/// Appends shot-log events (JSON Lines) to a file, one `write` per event followed by an
/// `fsync`, so a crash or a power cut loses at most the event being written (which
/// `ShotLog` then reads as a torn last line). Used from the session's event thread,
/// never the loop thread.
public final class ShotLogWriter {
    public let path: String
    private let fd: FileDescriptor
    private var closed = false

    /// Opens `path` for appending, creating it and its directory if needed.
    public init(path: String) throws {
        self.path = path
        let directory = FilePath(path).removingLastComponent().string
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        tornLine = try Self.cutTornLine(path)
        fd = try FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .append, .closeOnExec],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
    }

    /// The unterminated last line a crash or power cut left in the log, if there was one:
    /// it was cut off (and kept in `PATH.torn`) so the next event starts on a clean line.
    public let tornLine: String?

    /// Cuts an unterminated last line off the log at `path`, appending it to `path.torn`
    /// first (nothing is lost); returns it, or nil when the log ends cleanly (or is new).
    static func cutTornLine(_ path: String) throws -> String? {
        guard let handle = try? FileDescriptor.open(FilePath(path), .readWrite, options: [.closeOnExec]) else { return nil }
        defer { try? handle.close() }
        let size = try handle.seek(offset: 0, from: .end)
        guard size > 0 else { return nil }
        // Look back for the last line break, a block at a time.
        var end = size
        var tail: [UInt8] = []
        while end > 0 {
            let start = end >= 4096 ? end - 4096 : 0
            let block = try [UInt8](unsafeUninitializedCapacity: Int(end - start)) { buffer, count in
                count = try handle.read(fromAbsoluteOffset: start, into: UnsafeMutableRawBufferPointer(buffer))
            }
            if end == size, block.last == UInt8(ascii: "\n") { return nil }
            if let newline = block.lastIndex(of: UInt8(ascii: "\n")) {
                tail = block[(newline + 1)...] + tail
                end = start + Int64(newline) + 1
                break
            }
            tail = block + tail
            end = start
        }
        let keep = try FileDescriptor.open(
            FilePath(path + ".torn"), .writeOnly, options: [.create, .append, .closeOnExec],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
        try keep.closeAfter {
            _ = try keep.writeAll(tail + Array("\n".utf8))
            guard fsync(keep.rawValue) == 0 else { throw Errno(rawValue: errno) }
        }
        try handle.resize(to: end)
        guard fsync(handle.rawValue) == 0 else { throw Errno(rawValue: errno) }
        return String(decoding: tail, as: UTF8.self)
    }

    /// Writes one event as a line and flushes it to the disk. A write that fails part way
    /// (a full disk) is cut back off, so the log still ends on a whole line.
    public func append(_ event: ShotLogEvent) throws {
        guard !closed else { return }
        let before = try fd.seek(offset: 0, from: .end)
        do {
            try fd.writeAll(Array((event.jsonLine() + "\n").utf8))
        } catch {
            _ = try? fd.resize(to: before)
            throw error
        }
        guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
    }

    public func close() throws {
        guard !closed else { return }
        closed = true
        try fd.close()
    }

    deinit {
        if !closed { try? fd.close() }
    }
}

import Foundation
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
        let directory = (path as NSString).deletingLastPathComponent
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
        guard let handle = FileHandle(forUpdatingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let size = try handle.seekToEnd()
        guard size > 0 else { return nil }
        // Look back for the last line break, a block at a time.
        var end = size
        var tail = Data()
        while end > 0 {
            let start = end >= 4096 ? end - 4096 : 0
            try handle.seek(toOffset: start)
            let block = try handle.read(upToCount: Int(end - start)) ?? Data()
            if end == size, block.last == UInt8(ascii: "\n") { return nil }
            if let newline = block.lastIndex(of: UInt8(ascii: "\n")) {
                tail = block[(newline + 1)...] + tail
                end = start + UInt64(newline - block.startIndex) + 1
                break
            }
            tail = block + tail
            end = start
        }
        let torn = path + ".torn"
        if !FileManager.default.fileExists(atPath: torn) { _ = FileManager.default.createFile(atPath: torn, contents: nil) }
        guard let keep = FileHandle(forWritingAtPath: torn) else { throw Errno(rawValue: errno) }
        try keep.seekToEnd()
        try keep.write(contentsOf: tail + Data("\n".utf8))
        try keep.synchronize()
        try keep.close()
        try handle.truncate(atOffset: end)
        try handle.synchronize()
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

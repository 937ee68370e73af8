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
        fd = try FileDescriptor.open(
            FilePath(path), .writeOnly, options: [.create, .append, .closeOnExec],
            permissions: [.ownerReadWrite, .groupRead, .otherRead])
    }

    /// Writes one event as a line and flushes it to the disk.
    public func append(_ event: ShotLogEvent) throws {
        guard !closed else { return }
        try fd.writeAll(Array((event.jsonLine() + "\n").utf8))
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

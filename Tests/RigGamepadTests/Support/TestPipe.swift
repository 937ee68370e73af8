import Glibc
import SystemPackage

/// A real pipe: the test writes recorded records into one end, the reader reads the
/// other (non-blocking, like the evdev node).
final class TestPipe {
    let readEnd: FileDescriptor
    private(set) var writeEnd: FileDescriptor?

    init() throws {
        let (r, w) = try FileDescriptor.pipe()
        readEnd = r
        writeEnd = w
        let flags = fcntl(r.rawValue, F_GETFL)
        _ = fcntl(r.rawValue, F_SETFL, flags | O_NONBLOCK)
    }

    func write(_ bytes: [UInt8]) throws {
        guard let writeEnd else { return }
        _ = try writeEnd.writeAll(bytes)
    }

    /// The device is unplugged: the reader sees end of file.
    func closeWriteEnd() {
        try? writeEnd?.close()
        writeEnd = nil
    }

    deinit {
        try? writeEnd?.close()
        try? readEnd.close()
    }
}

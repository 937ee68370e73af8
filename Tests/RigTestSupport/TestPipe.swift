import Glibc
import SystemPackage

/// A real pipe for every test target: the test writes into one end, the code under test
/// reads the other (non-blocking, like an evdev node).
public final class TestPipe {
    public let readEnd: FileDescriptor
    public private(set) var writeEnd: FileDescriptor?

    public init() throws {
        let (r, w) = try FileDescriptor.pipe()
        readEnd = r
        writeEnd = w
        let flags = fcntl(r.rawValue, F_GETFL)
        _ = fcntl(r.rawValue, F_SETFL, flags | O_NONBLOCK)
    }

    public func write(_ bytes: [UInt8]) throws {
        guard let writeEnd else { return }
        _ = try writeEnd.writeAll(bytes)
    }

    /// The device is unplugged: the reader sees end of file.
    public func closeWriteEnd() {
        try? writeEnd?.close()
        writeEnd = nil
    }

    deinit {
        try? writeEnd?.close()
        try? readEnd.close()
    }
}

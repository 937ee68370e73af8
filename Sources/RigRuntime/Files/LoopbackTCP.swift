import Glibc
import SystemPackage

/// A TCP connection to this machine (127.0.0.1), for the tools that talk to a local
/// `rig serve` over plain sockets (`rig bench serve` and the tests' raw HTTP), and a free
/// port for the local servers they start (`rig bench group`'s and the tests' brokers).
public enum LoopbackTCP {
    /// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick), or the errno.
    public static func freePort() -> Result<Int, Errno> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(Errno(rawValue: errno)) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { return .failure(Errno(rawValue: errno)) }
        return .success(Int(UInt16(bigEndian: address.sin_port)))
    }

    /// An open socket to 127.0.0.1:`port` (the caller closes it), or the errno it failed with.
    /// - Parameter receiveTimeoutSeconds: reads give up after this long (none: block).
    public static func connect(port: Int, receiveTimeoutSeconds: Int? = nil) -> Result<Int32, Errno> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(Errno(rawValue: errno)) }
        if let receiveTimeoutSeconds {
            var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            return .failure(Errno(rawValue: code))
        }
        return .success(fd)
    }
}

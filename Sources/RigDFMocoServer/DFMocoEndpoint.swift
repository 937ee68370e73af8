import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Where Dragonframe reaches the rig.
public enum DFMocoEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// A TCP port ("DFMoco / TCP"); port 0 picks a free one (tests).
    case tcp(host: String, port: UInt16)
    /// A serial device at 57600 8N1 (a USB serial adapter, `/dev/ttyGS0` in USB gadget mode, a pty).
    case serial(path: String)

    public var description: String {
        switch self {
        case .tcp(let host, let port): "tcp \(host):\(port)"
        case .serial(let path): "serial \(path) 57600 8N1"
        }
    }

    /// `HOST:PORT` (`127.0.0.1:10001`, `[::1]:10001`, `:10001` for every IPv4 address).
    public static func parseListen(_ text: String) -> DFMocoEndpoint? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        guard let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return .tcp(host: host.isEmpty ? "0.0.0.0" : host, port: port)
    }
}

/// Why the endpoint could not be opened.
public struct DFMocoEndpointError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A listening TCP socket (IPv4 or IPv6, numeric addresses).
struct TCPListener {
    let fd: FileDescriptor
    let port: UInt16

    init(host: String, port: UInt16) throws(DFMocoEndpointError) {
        var v4 = in_addr()
        var v6 = in6_addr()
        let isV4 = inet_pton(AF_INET, host, &v4) == 1
        let isV6 = !isV4 && inet_pton(AF_INET6, host, &v6) == 1
        guard isV4 || isV6 else {
            throw DFMocoEndpointError("--listen \(host): not a numeric IPv4 or IPv6 address (use 127.0.0.1, 0.0.0.0 or ::1)")
        }
        let raw = socket(isV4 ? AF_INET : AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw DFMocoEndpointError("socket(): \(Errno(rawValue: errno))") }
        let fd = FileDescriptor(rawValue: raw)
        var one: Int32 = 1
        _ = setsockopt(raw, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        if isV4 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr = v4
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(raw, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        } else {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = v6
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(raw, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
        // Non-blocking: a connection reset between poll() and accept() must not stall the server.
        _ = fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK)
        if bound != 0 || listen(raw, 4) != 0 {
            let e = Errno(rawValue: errno)
            try? fd.close()
            throw DFMocoEndpointError("cannot listen on \(host):\(port): \(e)\(e == .addressInUse ? " (another program uses the port)" : "")")
        }
        var name = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(raw, $0, &length) }
        }
        let actual: UInt16 = withUnsafePointer(to: &name) { p in
            isV4
                ? p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                : p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
        self.fd = fd
        self.port = actual
    }

    /// Accepts one pending connection (non-blocking, close-on-exec) and names its peer.
    func accept() -> (FileDescriptor, String)? {
        var peer = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let raw = withUnsafeMutablePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.accept(fd.rawValue, $0, &length)
            }
        }
        guard raw >= 0 else { return nil }
        _ = fcntl(raw, F_SETFD, FD_CLOEXEC)
        _ = fcntl(raw, F_SETFL, fcntl(raw, F_GETFL) | O_NONBLOCK)
        return (FileDescriptor(rawValue: raw), Self.describe(peer))
    }

    static func describe(_ peer: sockaddr_storage) -> String {
        var copy = peer
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(copy.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &copy) { p in
                p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
                    var addr = a.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    return "\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)):\(UInt16(bigEndian: a.pointee.sin_port))"
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &copy) { p in
                p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
                    var addr = a.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
                    return
                        "[\(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))]:\(UInt16(bigEndian: a.pointee.sin6_port))"
                }
            }
        default:
            return "a peer"
        }
    }
}

/// A serial line set to raw 57600 8N1, no flow control, non-blocking.
enum SerialPort {
    static func open(_ path: String) throws(DFMocoEndpointError) -> FileDescriptor {
        let raw = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard raw >= 0 else { throw DFMocoEndpointError("cannot open \(path): \(Errno(rawValue: errno))") }
        var settings = termios()
        guard tcgetattr(raw, &settings) == 0 else {
            let e = Errno(rawValue: errno)
            _ = close(raw)
            throw DFMocoEndpointError("\(path) is not a serial device: \(e)")
        }
        cfmakeraw(&settings)
        _ = cfsetispeed(&settings, speed_t(B57600))
        _ = cfsetospeed(&settings, speed_t(B57600))
        // 8 data bits, no parity, one stop bit, no hardware flow control; ignore modem lines.
        settings.c_cflag &= ~(tcflag_t(CSIZE) | tcflag_t(PARENB) | tcflag_t(CSTOPB) | tcflag_t(CRTSCTS))
        settings.c_cflag |= tcflag_t(CS8) | tcflag_t(CLOCAL) | tcflag_t(CREAD)
        settings.c_iflag &= ~(tcflag_t(IXON) | tcflag_t(IXOFF) | tcflag_t(IXANY))
        guard tcsetattr(raw, TCSANOW, &settings) == 0 else {
            let e = Errno(rawValue: errno)
            _ = close(raw)
            throw DFMocoEndpointError("cannot set \(path) to 57600 8N1: \(e)")
        }
        _ = tcflush(raw, TCIOFLUSH)
        return FileDescriptor(rawValue: raw)
    }
}

import Foundation
import RigRuntime

#if canImport(Glibc)
    import Glibc
#endif

/// HTTP as an attacker writes it: the exact bytes of a request (a path no client library
/// would send, any `Host`, a chunked body) over a loopback socket, and the reply's status.
enum RawHTTP {
    struct Failed: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends `request` to 127.0.0.1:`port` and reads until the server closes (the request
    /// should say `Connection: close`) or `timeoutSeconds` pass. Returns the status code
    /// (0 when none came) and the whole reply.
    static func send(_ request: [UInt8], port: Int, timeoutSeconds: Int = 20) throws -> (status: Int, reply: String) {
        let fd = try connect(port: port, timeoutSeconds: timeoutSeconds)
        defer { close(fd) }
        // A server that answers early (413) stops reading: the rest of the body is not
        // waited on for long.
        var sendTimeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < request.count {
            let n = request[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            // The server may answer and close before the whole body is sent (413).
            if n <= 0 { break }
            offset += n
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            reply.append(contentsOf: buffer[0..<n])
        }
        let text = String(decoding: reply, as: UTF8.self)
        let status = text.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        return (status, text)
    }

    /// An open connection to 127.0.0.1:`port` (the caller closes it), reads timing out
    /// after `timeoutSeconds`.
    static func connect(port: Int, timeoutSeconds: Int = 30) throws -> Int32 {
        switch LoopbackTCP.connect(port: port, receiveTimeoutSeconds: timeoutSeconds) {
        case .success(let fd): return fd
        case .failure(let errno): throw Failed(description: "connect: \(errno)")
        }
    }

    /// Writes all of `bytes`.
    static func write(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads until the server closes the connection: what came, and whether the end was
    /// the server's close (false: the read timed out first).
    static func readToClose(_ fd: Int32) -> (text: String, closed: Bool) {
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return (String(decoding: reply, as: UTF8.self), true) }
            if n < 0 { return (String(decoding: reply, as: UTF8.self), errno == ECONNRESET) }
            reply.append(contentsOf: buffer[0..<n])
        }
    }

    /// A request with `Connection: close` and, if given, a JSON body.
    static func request(
        _ method: String, _ path: String, host: String = "127.0.0.1", headers: [String] = [], body: String? = nil,
        contentType: String? = "application/json"
    ) -> [UInt8] {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: \(host)", "Connection: close"] + headers
        if let body {
            if let contentType { lines.append("Content-Type: \(contentType)") }
            lines.append("Content-Length: \(body.utf8.count)")
        }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")).utf8)
    }
}

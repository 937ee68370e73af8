import Glibc

/// Where a phone finds the server: `HOSTNAME.local` (avahi-daemon answers it) and every
/// non-loopback IPv4 address the machine has now, for a server listening on all of them.
public enum PairingAddresses {
    /// The hosts to put in a URL for a server listening on `host`: that one, or for
    /// `0.0.0.0`/`::` the machine's `.local` name and its addresses.
    public static func hosts(listeningOn host: String) -> [String] {
        guard host == "0.0.0.0" || host == "::" || host.isEmpty else { return [host] }
        var hosts: [String] = []
        if let name = hostName() { hosts.append(name + ".local") }
        hosts += ipv4Addresses()
        return hosts.isEmpty ? ["127.0.0.1"] : hosts
    }

    /// `gethostname`, without a domain.
    static func hostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let short = name.split(separator: ".").first.map(String.init) ?? ""
        return short.isEmpty || short == "localhost" ? nil : short
    }

    /// The up, non-loopback IPv4 addresses (getifaddrs), in interface order, no repeats.
    public static func ipv4Addresses() -> [String] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, address.pointee.sa_family == sa_family_t(AF_INET),
                flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
            else { continue }
            var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            let ok = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet -> Bool in
                var raw = inet.pointee.sin_addr
                return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
            }
            let shown = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if ok, !found.contains(shown) { found.append(shown) }
        }
        return found
    }

    /// `http://HOST:PORT/pair?code=CODE` for each host.
    public static func urls(hosts: [String], port: Int, code: String) -> [String] {
        hosts.map { host in "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/pair?code=\(code)" }
    }
}

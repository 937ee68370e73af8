#if canImport(Glibc)
    import Glibc
#endif

extension DBusValue {
    /// Every unix fd inside this value, depth first.
    var fileDescriptors: [DBusUnixFD] {
        switch self {
        case .unixFD(let fd): [fd]
        case .variant(let inner): inner.fileDescriptors
        case .array(_, let items), .structure(let items): items.flatMap(\.fileDescriptors)
        case .dictionary(_, _, let entries): entries.flatMap { $0.key.fileDescriptors + $0.value.fileDescriptors }
        default: []
        }
    }
}

extension Array where Element == DBusValue {
    /// Closes the fds of values read from a message that nobody took ownership of.
    func closeFileDescriptors() {
        for fd in flatMap(\.fileDescriptors) where fd.rawValue >= 0 { _ = close(fd.rawValue) }
    }
}

import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// EREMOTEIO (Linux only; swift-system has no name for it): what the Raspberry Pi's I2C
/// controller reports when nothing acknowledges an address ("Remote I/O error").
#if canImport(Glibc)
    let remoteIOErrnoValue: CInt = EREMOTEIO
#else
    let remoteIOErrnoValue: CInt = 121
#endif

/// The symbolic name of the errno values an I2C bus produces, for messages a user can
/// search for ("EREMOTEIO"); others as "errno N".
func errnoName(_ errno: Errno) -> String {
    switch errno {
    case .ioError: "EIO"
    case .noSuchAddressOrDevice: "ENXIO"
    case .timedOut: "ETIMEDOUT"
    case .resourceTemporarilyUnavailable: "EAGAIN"
    case .resourceBusy: "EBUSY"
    case .noSuchFileOrDirectory: "ENOENT"
    case .permissionDenied: "EACCES"
    case .notPermitted: "EPERM"
    case .operationNotSupportedByDevice: "ENODEV"
    case .invalidArgument: "EINVAL"
    case .badFileDescriptor: "EBADF"
    default: errno.rawValue == remoteIOErrnoValue ? "EREMOTEIO" : "errno \(errno.rawValue)"
    }
}

import Glibc
import SystemPackage

/// The one way rig makes a libc call that reports failure as -1 and errno (swift-system's
/// `valueOrErrno`/`retryOnInterrupt` habit, which it keeps internal; the PCA9685's
/// `I2CSyscalls` maps its calls the same way): a call a signal interrupted (EINTR) is made
/// again, and any other failure is its `Errno`, read right after the call. No allocation.
public enum Syscall {
    @inline(__always)
    public static func call<T: FixedWidthInteger>(_ body: () -> T) -> Result<T, Errno> {
        while true {
            let result = body()
            guard result == -1 else { return .success(result) }
            let code = Glibc.errno
            if code == EINTR { continue }
            return .failure(Errno(rawValue: code))
        }
    }
}

import FoundationEssentials
import Glibc

/// An error as a person reads it: a FileManager error as the system's words for its cause
/// and the file ("Permission denied (/var/lib/rig)"); anything else as it describes itself.
/// (Full Foundation's `localizedDescription` did this; FoundationEssentials' errors print
/// their fields.)
public func errorText(_ error: any Error) -> String {
    if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
        return String(cString: strerror(posix.code.rawValue)) + (cocoa.filePath.map { " (\($0))" } ?? "")
    }
    return "\(error)"
}

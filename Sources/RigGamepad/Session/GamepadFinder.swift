import FoundationEssentials
import Glibc
import SystemPackage

/// Finds a gamepad among evdev nodes by what it can do — absolute axes plus a gamepad
/// button (BTN_GAMEPAD, alias BTN_SOUTH) by EVIOCGBIT — not by name. Prefers the stable
/// `by-id/*-event-joystick` links, then `eventN` in order. The directory and the ioctls
/// are injectable for tests.
public struct GamepadFinder: Sendable {
    /// `/dev/input`, or a test directory.
    public var directory: String
    public var control: any EvdevControl
    /// Only this node (`--device`), if set.
    public var device: String?

    public init(directory: String = "/dev/input", control: any EvdevControl = LinuxEvdevControl(), device: String? = nil) {
        self.directory = directory
        self.control = control
        self.device = device
    }

    /// What a scan found.
    public struct Found {
        public var path: String
        public var fd: FileDescriptor
    }

    /// Nodes to try, best first, each once (links resolved).
    public func candidates() -> [String] {
        if let device { return [device] }
        let files = FileManager.default
        var out: [String] = []
        var seen = Set<String>()
        func add(_ path: String) {
            // Every link resolved (realpath): a by-id link and the node it names are one device.
            let real =
                realpath(path, nil).map { resolved in
                    defer { free(resolved) }
                    return String(cString: resolved)
                } ?? path
            if seen.insert(real).inserted { out.append(path) }
        }
        let byID = directory + "/by-id"
        for name in ((try? files.contentsOfDirectory(atPath: byID)) ?? []).sorted() where name.hasSuffix("-event-joystick") {
            add(byID + "/" + name)
        }
        let events = ((try? files.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("event") }
        for name in events.sorted(by: { (Int($0.dropFirst(5)) ?? .max) < (Int($1.dropFirst(5)) ?? .max) }) {
            add(directory + "/" + name)
        }
        return out
    }

    /// Opens the first gamepad (non-blocking), or returns nil and why each candidate
    /// was passed over (permission problems are worth telling the user).
    public func find() -> (found: Found?, problems: [String]) {
        var problems: [String] = []
        for path in candidates() {
            let fd: FileDescriptor
            do {
                fd = try FileDescriptor.open(path, .readOnly, options: [.nonBlocking, .closeOnExec])
            } catch {
                if (error as? Errno) == .permissionDenied {
                    problems.append("\(path): permission denied (add the user to the \"input\" group, then log in again)")
                } else if device != nil {
                    problems.append("\(path): \(error)")
                }
                continue
            }
            if isGamepad(fd) { return (Found(path: path, fd: fd), problems) }
            if device != nil { problems.append("\(path): not a gamepad (no absolute axes or no gamepad buttons)") }
            try? fd.close()
        }
        return (nil, problems)
    }

    /// EV_ABS with at least one axis, and BTN_GAMEPAD.
    public func isGamepad(_ fd: FileDescriptor) -> Bool {
        var keys = EvdevBitmap(byteCount: EvdevCode.keyBitmapBytes)
        var abs = EvdevBitmap(byteCount: EvdevCode.absBitmapBytes)
        do {
            try control.eventBits(fd, type: EvdevCode.key, into: &keys)
            try control.eventBits(fd, type: EvdevCode.absolute, into: &abs)
        } catch {
            return false
        }
        return keys.contains(Int(EvdevCode.btnGamepad)) && !abs.codes.isEmpty
    }
}

import FoundationEssentials
import Glibc

/// Where rig keeps state across runs (remembered poses, the last BLEControl board).
public enum StateDirectory {
    /// `$XDG_STATE_HOME/rig`, else `/var/lib/rig` when running as root (a service) or as the
    /// package's system user "rig" (its home is /var/lib/rig: `sudo -u rig rig …` keeps its
    /// state where the units do), else `~/.local/state/rig` (the XDG default). Nil when none applies.
    public static func `default`(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        isRoot: Bool = geteuid() == 0
    ) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/rig" }
        if isRoot || environment["HOME"] == serviceDirectory { return serviceDirectory }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/rig" }
        return nil
    }

    /// The units' `StateDirectory=rig`, the package's user's home.
    public static let serviceDirectory = "/var/lib/rig"
}

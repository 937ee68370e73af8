import CLinux

/// rig's version, as `rig --version` prints it and the Debian package is numbered.
public enum RigVersion {
    /// The release this source tree is working towards; bump it with a release.
    public static let release = "0.2.0"

    /// The package's version when scripts/package-deb built this binary (the release plus the
    /// commit's date and hash, so apt upgrades every build), else `release`.
    public static var current: String {
        guard let build = rig_build_version() else { return release }
        return String(cString: build)
    }
}

import Foundation

/// Remembers the last BLEControl board an adapter connected to, so the next start prefers
/// it when several boards are in range. The file is `blecontrol-<adapter>.json` in the
/// state directory (`$XDG_STATE_HOME/rig`, `/var/lib/rig` as root, else
/// `~/.local/state/rig`), replaced atomically (temporary file, fsync, rename).
public struct BLEControlBoardMemory: Sendable {
    public let filePath: String

    struct Contents: Codable, Equatable {
        var address: String
        var name: String?
    }

    public init(directory: String, adapter: String) {
        filePath = (directory.hasSuffix("/") ? directory : directory + "/") + "blecontrol-\(adapter).json"
    }

    /// Where rig keeps state (the same rule as the PCA9685 pose file).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment,
                                        isRoot: Bool = geteuid() == 0) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/rig" }
        if isRoot { return "/var/lib/rig" }
        if let home = environment["HOME"], home.hasPrefix("/") { return home + "/.local/state/rig" }
        return nil
    }

    /// The remembered board's address, if the file is there and readable.
    public func load() -> (address: String, name: String?)? {
        guard let data = FileManager.default.contents(atPath: filePath),
              let contents = try? JSONDecoder().decode(Contents.self, from: data) else { return nil }
        return (contents.address, contents.name)
    }

    /// Records the board; unchanged contents are not rewritten.
    public func save(address: String, name: String?) throws {
        let contents = Contents(address: address, name: name)
        if let data = FileManager.default.contents(atPath: filePath),
           (try? JSONDecoder().decode(Contents.self, from: data)) == contents { return }
        let directory = (filePath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(contents)
        let temporary = filePath + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary]) }
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        close(fd)
        guard written == data.count, synced == 0, rename(temporary, filePath) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: filePath])
        }
    }
}

import FoundationEssentials
import Glibc
import RigRuntime

/// Remembers the last BLEControl board an adapter connected to, so the next start prefers
/// it when several boards are in range. The file is `blecontrol-<adapter>.json` in the
/// state directory (`StateDirectory`), replaced atomically (`AtomicFile`).
public struct BLEControlBoardMemory: Sendable {
    public let filePath: String

    struct Contents: Codable, Equatable {
        var address: String
        var name: String?
    }

    public init(directory: String, adapter: String) {
        filePath = (directory.hasSuffix("/") ? directory : directory + "/") + "blecontrol-\(adapter).json"
    }

    /// The remembered board's address, if the file is there and readable.
    public func load() -> (address: String, name: String?)? {
        guard let data = FileManager.default.contents(atPath: filePath),
            let contents = try? JSONDecoder().decode(Contents.self, from: data)
        else { return nil }
        return (contents.address, contents.name)
    }

    /// Records the board; unchanged contents are not rewritten.
    public func save(address: String, name: String?) throws {
        let contents = Contents(address: address, name: name)
        if let data = FileManager.default.contents(atPath: filePath),
            (try? JSONDecoder().decode(Contents.self, from: data)) == contents
        {
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try AtomicFile.write(Array(try encoder.encode(contents)), to: filePath, createDirectory: true)
    }
}

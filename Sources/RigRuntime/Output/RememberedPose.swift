import FoundationEssentials
import Glibc
import RigCore
import Synchronization

/// What an output last commanded on each channel, kept in a small JSON file so the next
/// run starts from there instead of jumping to home (`Output.lastKnownCommand`).
///
/// The loop thread only `record`s into memory (a short uncontended lock, no allocation, no
/// I/O); `save()` runs off the loop thread (the session calls `Output.persistState()` every
/// `SessionOptions.persistIntervalSeconds`, and the output at shutdown) and writes only
/// when something changed, atomically (`AtomicFile`).
public final class RememberedPose: Sendable {
    public let filePath: String

    private struct Entry: Codable, Equatable {
        /// "pulse" (µs) or "duty" (%).
        var kind: String
        var value: Double
    }

    private struct State {
        var commands: [ChannelCommandSlot]
        var generation = 0
        var savedGeneration = 0
    }

    /// A channel's last command without heap storage (the loop thread copies it).
    private enum ChannelCommandSlot: Equatable {
        case none
        case pulse(Double)
        case duty(Double)
    }

    private let state: Mutex<State>
    private let loaded: [Int: ChannelCommand]

    /// - Parameters:
    ///   - channels: the highest channel number + 1 the output has.
    public init(filePath: String, channels: Int) {
        self.filePath = filePath
        state = Mutex(State(commands: Array(repeating: .none, count: max(0, channels))))
        var loaded: [Int: ChannelCommand] = [:]
        var problem: String?
        let data = FileManager.default.contents(atPath: filePath)
        let entries = data.flatMap { try? JSONDecoder().decode([String: Entry].self, from: $0) }
        if data != nil, entries == nil {
            problem = "the remembered pose \(filePath) is unreadable (cut short by a power loss?): starting without it; it is replaced at the next save"
        }
        if let entries {
            for (key, entry) in entries {
                guard let channel = Int(key), (0..<max(0, channels)).contains(channel), entry.value.isFinite else { continue }
                switch entry.kind {
                case "pulse": loaded[channel] = .pulse(microseconds: entry.value)
                case "duty": loaded[channel] = .duty(percent: entry.value)
                default: continue
                }
            }
        }
        self.loaded = loaded
        loadProblem = problem
    }

    /// Why the file said nothing (it exists but is unreadable), for the caller to log.
    public let loadProblem: String?

    /// What the file said when this run began, for `channel`.
    public func remembered(channel: Int) -> ChannelCommand? { loaded[channel] }

    /// Notes that `channel` now shows `command` (`.off` is not remembered: the position
    /// before it stays). Loop thread: no allocation.
    @inline(__always)
    public func record(channel: Int, _ command: ChannelCommand) {
        let slot: ChannelCommandSlot
        switch command {
        case .pulse(let us): slot = .pulse(us)
        case .duty(let percent): slot = .duty(percent)
        case .off: return
        }
        state.withLock { s in
            guard s.commands.indices.contains(channel), s.commands[channel] != slot else { return }
            s.commands[channel] = slot
            s.generation &+= 1
        }
    }

    /// Writes the pose if it changed since the last save. Not on the loop thread.
    public func save() throws(AtomicFile.WriteError) {
        let (commands, generation, changed) = state.withLock { s in
            (s.commands.map { $0 }, s.generation, s.generation != s.savedGeneration)
        }
        guard changed else { return }
        var entries: [String: Entry] = [:]
        for (channel, slot) in commands.enumerated() {
            switch slot {
            case .none: continue
            // A value JSON cannot hold (NaN, infinite) is not remembered: the file's
            // last good value for the channel stays.
            case .pulse(let us) where us.isFinite: entries[String(channel)] = Entry(kind: "pulse", value: us)
            case .duty(let percent) where percent.isFinite: entries[String(channel)] = Entry(kind: "duty", value: percent)
            case .pulse, .duty: continue
            }
        }
        // Channels this run never drove keep what the file said.
        for (channel, command) in loaded where entries[String(channel)] == nil {
            switch command {
            case .pulse(let us): entries[String(channel)] = Entry(kind: "pulse", value: us)
            case .duty(let percent): entries[String(channel)] = Entry(kind: "duty", value: percent)
            case .off: break
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A failed encode keeps the old file (an empty one would lose the pose, and the
        // next start would jump).
        let bytes: [UInt8]
        do { bytes = Array(try encoder.encode(entries)) } catch {
            throw AtomicFile.WriteError(path: filePath, step: "encoding the pose", errno: .invalidArgument)
        }
        try AtomicFile.write(bytes, to: filePath, createDirectory: true)
        state.withLock { if $0.savedGeneration < generation { $0.savedGeneration = generation } }
    }
}

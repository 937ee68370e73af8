import FoundationEssentials
import Glibc
import RigRuntime
import Synchronization
import SystemPackage

/// Remembers the last commanded pose of one PCA9685 board (counts per channel) in a small
/// JSON file, so the next start can program it before the outputs wake and the servos
/// do not jump.
///
/// The file is `pca9685-<bus>-0x<address>.json` (e.g. `pca9685-i2c-1-0x40.json`) in the
/// state directory (`StateDirectory`), replaced atomically (`AtomicFile`).
///
/// When it is written: the loop thread only ``record(channel:counts:)``s into memory (a
/// short uncontended lock, no allocation, no I/O). ``PCA9685Output`` saves at shutdown.
/// A program that wants the pose to survive a power cut too calls ``save()`` every few
/// seconds from a housekeeping thread (not the loop thread): it writes only when the pose
/// changed since the last save. This type is `Sendable` for that.
public final class PCA9685StateStore: Sendable {
    /// The state file.
    public let filePath: String

    private struct Pose {
        var counts: [Int]  // -1: never driven
        var periodMicroseconds: Double
        var generation = 0
        var savedGeneration = 0
    }

    private let pose: Mutex<Pose>

    /// A store for the board at `address` on `bus`, in `directory`.
    public init(directory: String, bus: String, address: Int) {
        let busName = bus.split(separator: "/").last.map(String.init) ?? "bus"
        let name = "pca9685-\(busName)-0x\(String(address, radix: 16)).json"
        filePath = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        pose = Mutex(Pose(counts: Array(repeating: -1, count: PCA9685Register.channelCount), periodMicroseconds: 0))
    }

    /// Sets the PWM period the recorded counts are measured in.
    func setPeriod(microseconds: Double) {
        pose.withLock { $0.periodMicroseconds = microseconds }
    }

    /// Notes that `channel` now shows `counts` high ticks (1…4096). Loop thread: no allocation.
    @inline(__always)
    func record(channel: Int, counts: Int) {
        pose.withLock { pose in
            if pose.counts[channel] != counts {
                pose.counts[channel] = counts
                pose.generation &+= 1
            }
        }
    }

    /// Writes the recorded pose if it changed since the last save. Any thread but the
    /// loop thread (it does file I/O).
    public func save() throws(PCA9685StateError) {
        var counts = Array(repeating: -1, count: PCA9685Register.channelCount)
        let (period, generation, changed) = pose.withLock { pose in
            for i in counts.indices { counts[i] = pose.counts[i] }  // element copy: no shared buffer with the loop
            return (pose.periodMicroseconds, pose.generation, pose.generation != pose.savedGeneration)
        }
        guard changed, period > 0 else { return }
        var channels: [String: Int] = [:]
        for (channel, count) in counts.enumerated() where count > 0 { channels[String(channel)] = count }
        let file = PCA9685StateFile(periodMicroseconds: period, counts: channels)
        try write(file)
        pose.withLock { if $0.savedGeneration < generation { $0.savedGeneration = generation } }
    }

    /// The pose saved by an earlier run, if there is a readable one.
    public func load() throws(PCA9685StateError) -> PCA9685SavedPose? {
        guard let data = FileManager.default.contents(atPath: filePath) else { return nil }
        let file: PCA9685StateFile
        do { file = try JSONDecoder().decode(PCA9685StateFile.self, from: data) } catch {
            throw PCA9685StateError(path: filePath, reason: "unreadable (\(error)); delete it to start fresh")
        }
        var counts: [Int?] = Array(repeating: nil, count: PCA9685Register.channelCount)
        for (key, count) in file.counts {
            guard let channel = Int(key), counts.indices.contains(channel), (1...PCA9685Math.countsPerPeriod).contains(count) else { continue }
            counts[channel] = count
        }
        guard file.periodMicroseconds > 0, file.periodMicroseconds.isFinite else { return nil }
        return PCA9685SavedPose(periodMicroseconds: file.periodMicroseconds, counts: counts)
    }

    private func write(_ file: PCA9685StateFile) throws(PCA9685StateError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data: Data
        do { data = try encoder.encode(file) } catch {
            throw PCA9685StateError(path: filePath, reason: "could not be encoded: \(error)")
        }
        do { try AtomicFile.write(Array(data), to: filePath, createDirectory: true) } catch {
            throw PCA9685StateError(path: filePath, reason: "could not be written: \(error)")
        }
    }
}

/// The state file's contents.
struct PCA9685StateFile: Codable, Equatable {
    /// The PWM period the counts were programmed with (so a changed frequency still
    /// restores the same pulse widths).
    var periodMicroseconds: Double
    /// High ticks per channel ("0"…"15"), for channels that were driven.
    var counts: [String: Int]
}

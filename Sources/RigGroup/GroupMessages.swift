import FoundationEssentials

/// The group's topics (MQTT 5, QoS 1, times in UTC nanoseconds), all under `rig/GROUP/`:
/// - `leader/step`: `StepOrder`, with a message expiry of the lead time; not retained.
/// - `leader/state`: `LeaderState`, retained: where every rig goes next, who is missing.
/// - `RIG/state`: `RigState`, retained; the rig's will message sets it to `lost`.
/// - `RIG/armed`: `Armed`; `RIG/shot`: `ShotReport`; `RIG/clock`: `ClockReport`.
/// - `stop`: `StopOrder`, from anyone: every rig brakes and parks.
public struct GroupTopics: Sendable, Equatable {
    public let group: String
    public init(group: String) { self.group = group }

    public var prefix: String { "rig/\(group)/" }
    public var step: String { prefix + "leader/step" }
    public var leaderState: String { prefix + "leader/state" }
    public var stop: String { prefix + "stop" }
    public var all: String { prefix + "#" }
    public func state(_ rig: String) -> String { prefix + "\(rig)/state" }
    public func armed(_ rig: String) -> String { prefix + "\(rig)/armed" }
    public func shot(_ rig: String) -> String { prefix + "\(rig)/shot" }
    public func clock(_ rig: String) -> String { prefix + "\(rig)/clock" }

    /// What a topic of this group is; nil for another group's, or one it does not know.
    public func classify(_ topic: String) -> Kind? {
        guard topic.hasPrefix(prefix) else { return nil }
        let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts == ["stop"] { return .stop }
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        if parts[0] == "leader" {
            switch parts[1] {
            case "step": return .step
            case "state": return .leaderState
            default: return nil
            }
        }
        switch parts[1] {
        case "state": return .rigState(parts[0])
        case "armed": return .armed(parts[0])
        case "shot": return .shot(parts[0])
        case "clock": return .clock(parts[0])
        default: return nil
        }
    }

    public enum Kind: Sendable, Equatable {
        case step, leaderState, stop
        case rigState(String)
        case armed(String)
        case shot(String)
        case clock(String)
    }

    /// A name for a group or a rig: ASCII letters, digits, `-` and `_` (no MQTT wildcards or
    /// separators), 1…64 characters. Nil when valid, else what is valid.
    public static func problem(name: String, what: String) -> String? {
        let ok =
            !name.isEmpty && name.count <= 64
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
            }
        return ok && name != "leader" ? nil : "\(what) \"\(name)\": valid: 1…64 ASCII letters, digits, - and _ (not \"leader\")"
    }
}

/// "Shoot step `step` at `atNs`": only the rigs named, each armed at that step.
public struct StepOrder: Codable, Sendable, Equatable {
    public var leader: String
    /// The leader's run: a leader that restarted is a new run, its `seq` counts anew.
    public var run: String
    /// Grows with every message of the run (orders and states): an older one is out of order.
    public var seq: Int
    /// 0-based.
    public var step: Int
    public var atNs: Int64
    /// The leader's program (SHA-256 of its file).
    public var sha: String
    public var rigs: [String]
}

/// Where each rig goes next (0-based step; the step count when it is done), who is missing.
public struct LeaderState: Codable, Sendable, Equatable {
    public var leader: String
    public var run: String
    public var seq: Int
    /// running, paused, done, stopped.
    public var state: String
    public var steps: Int
    public var next: [String: Int]
    public var missing: [String]
    public var sha: String
    /// A keyframes path's clock since the group last paused it (absent before): where the
    /// path is from each instant on (a brake to a hold; a hold and a ramp-in).
    public var path: [PathSegment]?
}

/// A piece of the group's path clock (UTC ns): from `atNs` the path is at `pathSeconds`
/// and `kind` (`run`, `brake`, `hold`, `rampIn`) says how it goes on, ramps over
/// `rampSeconds` (see `SharedTimeline.Segment`).
public struct PathSegment: Codable, Sendable, Equatable {
    public var kind: String
    public var atNs: Int64
    public var pathSeconds: Double
    public var rampSeconds: Double
}

/// A rig's retained state: what it does, where it is armed, its last shot.
public struct RigState: Codable, Sendable, Equatable {
    /// ready, moving, armed, shooting, done, stopped, lost.
    public var state: String
    public var armed: Int?
    public var lastShot: ShotReport?
    /// A keyframes path under way: where its timeline is (path seconds), whether it is at
    /// rest on it, how far it is behind the group's clock and whether the path leaves it
    /// room to catch up, and the seconds its brake to a hold takes (`SharedTimeline`).
    public var pathSeconds: Double?
    public var atRest: Bool?
    public var behindSeconds: Double?
    public var atLimit: Bool?
    public var rampSeconds: Double?

    public init(state: String, armed: Int? = nil, lastShot: ShotReport? = nil) {
        self.state = state
        self.armed = armed
        self.lastShot = lastShot
    }
}

public struct Armed: Codable, Sendable, Equatable {
    public var step: Int
}

/// "Shot `step` at `edgeNs`" (the rig's own measured trigger edge), with what the leader's
/// log says of the frame.
public struct ShotReport: Codable, Sendable, Equatable {
    public var step: Int
    public var edgeNs: Int64
    public var label: String?
    public var pose: [String: Double]?
}

/// STOP from `from` (a person's, or the leader's when a rig was lost during a keyframes
/// path: `reason` says which rig).
public struct StopOrder: Codable, Sendable, Equatable {
    public var from: String
    public var reason: String?

    public init(from: String, reason: String? = nil) {
        self.from = from
        self.reason = reason
    }
}

/// JSON in and out; a message that does not decode is nil (ignored, never acted on).
enum GroupJSON {
    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(value)).map { Array($0) } ?? []
    }

    static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) -> T? {
        guard bytes.count <= 64 * 1024 else { return nil }
        return try? JSONDecoder().decode(type, from: Data(bytes))
    }
}

import RigCore
import Synchronization

/// A group's keyframes path on one rig: the loop keeps its timeline on the group's clock.
///
/// Alone, a stall pauses the timeline and it is never made up. In a group every rig's path
/// must be at the group's path time, so once the path started the loop compares its
/// timeline with the reference (`Segment`s: the path time the group's clock says at each
/// instant) and plays it faster than real time while it is behind (`ResumeRamp.track`): a
/// rate above 1, ramped within each axis's acceleration and jerk and kept under its
/// velocity, from what the path asks of the axis there (`PathPeaks`). Where the path
/// leaves no room (an axis at its limit) the rate stays at 1 and `report.atLimit` says it
/// cannot catch up.
///
/// The group's clock can brake to a hold and ramp in again: a pause of the group brakes
/// the reference's rate to 0 along a smooth step every rig can follow, a hold keeps it at
/// one path time, and a ramp-in starts it again from one instant; each rig's timeline
/// follows within its own limits, so every rig holds at the same path time and goes on
/// together. `holdHere` brakes this rig's timeline to rest whatever the reference says
/// (this rig lost the broker: it cannot know what the group does); the lag goes on
/// counting and is made up once it is released.
public final class SharedTimeline: Sendable {
    /// From the loop clock's `atNs` the reference's path time starts at `pathSeconds` and…
    public struct Segment: Sendable, Equatable {
        public enum Kind: String, Sendable, Equatable, Codable {
            /// …runs at rate 1.
            case run
            /// …brakes from rate 1 to 0 over `rampSeconds` (a smooth step), then holds.
            case brake
            /// …holds.
            case hold
            /// …ramps from rate 0 to 1 over `rampSeconds` (a smooth step), then runs.
            case rampIn
        }
        public var kind: Kind
        public var atNs: UInt64
        public var pathSeconds: Double
        public var rampSeconds: Double

        public init(_ kind: Kind, atNs: UInt64, pathSeconds: Double, rampSeconds: Double = 0) {
            self.kind = kind
            self.atNs = atNs
            self.pathSeconds = pathSeconds
            self.rampSeconds = rampSeconds
        }

        /// The reference's path time and rate at `nowNs` (on or after `atNs`).
        func at(_ nowNs: UInt64) -> (path: Double, rate: Double) {
            let t = nowNs >= atNs ? Double(nowNs - atNs) / 1e9 : -Double(atNs - nowNs) / 1e9
            let d = max(rampSeconds, 1e-9)
            let u = min(max(t / d, 0), 1)
            let s = u * u * (3 - 2 * u)
            // ∫₀ᵘ s = u³ − u⁴/2.
            let integral = d * (u * u * u - u * u * u * u / 2)
            switch kind {
            case .run: return (pathSeconds + t, 1)
            case .hold: return (pathSeconds, 0)
            case .brake: return (pathSeconds + d * u - integral, 1 - s)
            case .rampIn: return (pathSeconds + integral + max(0, t - d), s)
            }
        }
    }

    /// What the loop last saw, every tick.
    public struct Report: Sendable, Equatable {
        /// Seconds of path time the timeline is behind the reference (negative: ahead).
        public var lagSeconds = 0.0
        /// The timeline's rate (path seconds per second).
        public var rate = 1.0
        /// The reference's rate.
        public var referenceRate = 1.0
        /// Path seconds played since the path started.
        public var pathSeconds = 0.0
        /// Behind, and the path leaves no room here to catch up (an axis at its limit).
        public var atLimit = false
        public var engaged = false
        /// At rest on the path (rate 0).
        public var atRest: Bool { engaged && rate == 0 }
    }

    struct Orders {
        /// The path's peaks (nil: no path armed, the timeline is inert).
        var peaks: PathPeaks?
        /// Which path: a new one (`arm`) starts the loop's part afresh.
        var generation = 0
        var engaged = false
        /// A path rejoined part-way: the source's frame tick it rests at (its timeline
        /// starts there, at rate 0).
        var restingAtTick: Int?
        var segments: [Segment] = []
        var holdHere = false
    }

    private let orders = Mutex(Orders())
    private let latest = Mutex(Report())

    /// One path's timeline (`rig play`, `rig follow`).
    public init(peaks: PathPeaks) { orders.withLock { $0.peaks = peaks } }

    /// A timeline for a host that plays paths one after another (`rig serve` leading a
    /// group): inert until `arm`, and armed again for each path.
    public init() {}

    /// The path's peaks (nil until armed).
    public var peaks: PathPeaks? { orders.withLock { $0.peaks } }

    /// The next path's timeline: its peaks, nothing engaged, no orders, the report
    /// cleared. Before that path's program is posted (the loop takes it as a new path).
    public func arm(_ peaks: PathPeaks) {
        orders.withLock {
            $0 = Orders(peaks: peaks, generation: $0.generation + 1)
        }
        latest.withLock { $0 = Report() }
    }

    /// The path starts (the loop's tick that starts it engages; `run`: the reference's
    /// first segment, the group's start; nil: the loop's tick). Nothing while no path is armed.
    public func engage(_ run: Segment? = nil) {
        orders.withLock {
            guard $0.peaks != nil else { return }
            $0.engaged = true
            if let run { $0.segments = [run] }
        }
    }

    /// The path was rejoined part-way (a restarted rig): the source rests at its frame of
    /// tick `tick` (`Player.rejoin`), and its timeline starts there from rest, following
    /// the reference given (`follow`) within the limits (the group's hold: it comes up to
    /// it along its path, then ramps in with the group).
    public func engage(restingAtTick tick: Int) {
        orders.withLock {
            guard $0.peaks != nil else { return }
            $0.engaged = true
            $0.restingAtTick = tick
        }
    }

    /// The reference from now on: `segments` (in time order) replace the ones after the
    /// first of them; the reference before stays as it was.
    public func follow(_ segments: [Segment]) {
        guard let first = segments.first else { return }
        orders.withLock { orders in
            orders.segments.removeAll { $0.atNs >= first.atNs }
            orders.segments += segments
        }
    }

    /// This rig brakes its timeline to rest and holds (true) whatever the reference says,
    /// or follows it again (false).
    public func holdHere(_ hold: Bool) { orders.withLock { $0.holdHere = hold } }

    public var isHeldHere: Bool { orders.withLock { $0.holdHere } }

    /// What the loop last saw.
    public var report: Report { latest.withLock { $0 } }

    /// The reference's path time at the loop clock's `nowNs` (nil before the path started).
    public func referencePath(atNs nowNs: UInt64) -> Double? {
        orders.withLock { orders in orders.segments.last { $0.atNs <= nowNs }.map { $0.at(nowNs).path } }
    }

    // The loop's side.

    /// Engaged, with its path's peaks, generation and, for a path rejoined part-way, the
    /// source's frame tick it rests at (nil: not engaged).
    var engagedPath: (peaks: PathPeaks, generation: Int, restingAtTick: Int?)? {
        orders.withLock { o in o.engaged ? o.peaks.map { ($0, o.generation, o.restingAtTick) } : nil }
    }

    /// The path started (or was rejoined) on this rig.
    public var engaged: Bool { orders.withLock { $0.engaged } }

    func publish(_ report: Report) { latest.withLock { $0 = report } }

    /// The reference at `nowNs` (the loop's first tick on the path sets the start when
    /// the link gave none: the path's first frame, one tick after `nowNs - periodNs`), and
    /// whether this rig holds here.
    func reference(atNs nowNs: UInt64, periodNs: UInt64) -> (path: Double, rate: Double, holdHere: Bool) {
        orders.withLock { orders in
            if orders.segments.isEmpty { orders.segments = [Segment(.run, atNs: nowNs &- periodNs, pathSeconds: 0)] }
            let segment = orders.segments.last { $0.atNs <= nowNs } ?? orders.segments[0]
            let r = segment.at(nowNs)
            return (r.path, r.rate, orders.holdHere)
        }
    }

    /// Seconds a smooth step of the reference from rate 1 to 0 (or back) needs on a rig
    /// with `axes` for a path with `peaks`: its steepest slope (1.5 / seconds) asks at most
    /// a quarter of each axis's acceleration and its jerk at most a quarter of the axis's
    /// at the path's fastest; at least 0.5 s, at most 30 s.
    public static func rampSeconds(axes: [Axis], peaks: PathPeaks) -> Double {
        var seconds = 0.5
        for (i, axis) in axes.enumerated() where i < peaks.velocity.count {
            let v = peaks.velocity[i].max() ?? 0
            guard v > 0, v.isFinite else { continue }
            seconds = max(seconds, 1.5 * v / (0.25 * axis.maxAcceleration), (6 * v / (0.25 * axis.maxJerk)).squareRoot())
        }
        return min(seconds, 30)
    }
}

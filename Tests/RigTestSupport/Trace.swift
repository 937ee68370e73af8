import Foundation

/// A parsed `--trace` CSV.
public struct Trace {
    public struct Row: Equatable, Sendable {
        public var time: Double
        public var axis: String
        public var channel: Int
        public var pulse: Double
        public var position: Double
        /// Wall-clock seconds since the loop began (the timeline pauses through a stall).
        public var wall: Double
        /// Where the simulated camera pointed (nil when the output does not model it).
        public var camera: Double?
    }
    public var header: String
    public var rows: [Row]

    public init(path: String) throws {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        header = lines.first ?? ""
        rows = lines.dropFirst().compactMap { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 7, let t = Double(f[0]), let c = Int(f[2]), let p = Double(f[3]), let x = Double(f[4]), let w = Double(f[5]) else {
                return nil
            }
            return Row(time: t, axis: f[1], channel: c, pulse: p, position: x, wall: w, camera: Double(f[6]))
        }
    }

    /// Whether the loop may have slowed the rig after a frame that came `gap` wall seconds
    /// after the one before: it does when it woke a whole tick late, which can leave the
    /// wake-ups just over a tick apart (when the tick before was late too).
    public static func cameLate(gap: Double, tickSeconds dt: Double) -> Bool { gap > dt + 0.0005 }

    /// Whether the loop stalled (woke a tick or more late: the timeline paused) between the
    /// first and the last of `times` (the loop's time).
    public func stalled(within times: [Double]) -> Bool {
        guard let first = times.min(), let last = times.max() else { return false }
        var previous: Row?
        for row in rows where row.time >= first && row.time <= last {
            defer { previous = row }
            guard let previous, row.time > previous.time else { continue }
            if Self.cameLate(gap: row.wall - previous.wall, tickSeconds: row.time - previous.time) { return true }
        }
        return false
    }

    /// The wall time of each tick's frame (its first row's).
    public func frameWallTimes(axes: [String]) -> [Double] { ticks(axes: axes).map(\.wall) }

    /// Positions per tick, in axis order.
    public func frames(axes: [String]) -> [[Double]] { ticks(axes: axes).map(\.positions) }

    /// Each tick's time and positions, in axis order. A loaded machine's trace may have lost
    /// rows (its writer fell behind; the loop never waits for it): a tick missing one of its
    /// axes is left out, and the times say where ticks are missing.
    public func ticks(axes: [String]) -> [(time: Double, wall: Double, positions: [Double])] {
        var ticks: [(time: Double, wall: Double, positions: [Double])] = []
        var current: [Double?] = Array(repeating: nil, count: axes.count)
        var time: Double?
        var wall = 0.0
        func flush() {
            if let time, current.allSatisfy({ $0 != nil }) { ticks.append((time, wall, current.map { $0 ?? .nan })) }
            current = Array(repeating: nil, count: axes.count)
        }
        for row in rows {
            if row.time != time {
                flush()
                time = row.time
                wall = row.wall
            }
            if let index = axes.firstIndex(of: row.axis) { current[index] = row.position }
        }
        flush()
        return ticks
    }
}

extension Trace {
    /// One axis's limits, as a check of traced frames needs them.
    public struct AxisLimits: Sendable {
        public var name: String
        public var maxVelocity: Double
        public var maxAcceleration: Double

        public init(name: String, maxVelocity: Double, maxAcceleration: Double) {
            self.name = name
            self.maxVelocity = maxVelocity
            self.maxAcceleration = maxAcceleration
        }
    }

    /// Every traced frame's velocity and acceleration per tick against its axis's limits,
    /// from `start` at rest: a line for each value that breaks one (none when all hold),
    /// the peak speed, and the last frame's velocity. Four decimals in the trace: 0.02 °/s
    /// and 2 °/s² are allowed for. The frame after one that reached the output late (a
    /// loaded machine, no real-time): the rig had slowed over the gap and the loop goes on
    /// from that slower speed, so in ticks its velocity may drop there (never rise).
    public func limitBreaks(_ axes: [AxisLimits], tickSeconds dt: Double, start: [Double]) -> (
        breaks: [String], peakSpeed: Double, lastVelocity: [Double]
    ) {
        let ticks = ticks(axes: axes.map(\.name))
        let frames = ticks.map(\.positions)
        let walls = ticks.map(\.wall)
        var breaks: [String] = []
        var previous = start
        var previousVelocity = [Double](repeating: 0, count: axes.count)
        var peakSpeed = 0.0
        for (k, pose) in frames.enumerated() {
            // Ticks the trace lost (a loaded machine): nothing is known across the gap.
            if k >= 1, ticks[k].time - ticks[k - 1].time > 1.5 * dt {
                previous = pose
                previousVelocity = [Double](repeating: .nan, count: axes.count)
                continue
            }
            // The frame before came `gap` after its own previous one: the loop, woken a tick
            // or more late, slowed the rig to dt / gap of its speed (`ResumeRamp`). The gap
            // between wake-ups can be under 1.5 dt when the tick before was late too (1.41 dt
            // slowed a braking rig to 0.71 of its speed in a loaded CI run).
            let gap = k >= 2 ? walls[k - 1] - walls[k - 2] : dt
            let afterStall = Self.cameLate(gap: gap, tickSeconds: dt)
            for (i, axis) in axes.enumerated() {
                let v = (pose[i] - previous[i]) / dt
                let a = (v - previousVelocity[i]) / dt
                peakSpeed = max(peakSpeed, abs(v))
                if abs(v) > axis.maxVelocity + 0.02 { breaks.append("frame \(k) axis \(axis.name): \(v) °/s") }
                // Slowed by no more than the stall slows it (and the axis's own braking).
                let slowest = abs(previousVelocity[i]) * min(1, dt / gap) - axis.maxAcceleration * dt - 0.04
                let slowedByTheStall =
                    afterStall && abs(v) <= abs(previousVelocity[i]) + 0.02 && abs(v) >= slowest && v * previousVelocity[i] >= 0
                if !slowedByTheStall, !a.isNaN, abs(a) > axis.maxAcceleration + 2 { breaks.append("frame \(k) axis \(axis.name): \(a) °/s²") }
                previousVelocity[i] = v
            }
            previous = pose
        }
        return (breaks, peakSpeed, previousVelocity)
    }
}

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

    /// The wall time of each tick's frame (its first row's).
    public func frameWallTimes(axes: [String]) -> [Double] {
        stride(from: 0, to: rows.count - rows.count % max(axes.count, 1), by: max(axes.count, 1)).map { rows[$0].wall }
    }

    /// Positions per tick, in axis order.
    public func frames(axes: [String]) -> [[Double]] {
        var frames: [[Double]] = []
        var current: [Double] = []
        for row in rows {
            current.append(row.position)
            if current.count == axes.count {
                frames.append(current)
                current = []
            }
        }
        return frames
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
        let frames = frames(axes: axes.map(\.name))
        let walls = frameWallTimes(axes: axes.map(\.name))
        var breaks: [String] = []
        var previous = start
        var previousVelocity = [Double](repeating: 0, count: axes.count)
        var peakSpeed = 0.0
        for (k, pose) in frames.enumerated() {
            let afterStall = k >= 2 && k - 1 < walls.count && walls[k - 1] - walls[k - 2] > 1.5 * dt
            for (i, axis) in axes.enumerated() {
                let v = (pose[i] - previous[i]) / dt
                let a = (v - previousVelocity[i]) / dt
                peakSpeed = max(peakSpeed, abs(v))
                if abs(v) > axis.maxVelocity + 0.02 { breaks.append("frame \(k) axis \(axis.name): \(v) °/s") }
                let slowedByTheStall = afterStall && abs(v) <= abs(previousVelocity[i]) + 0.02 && v * previousVelocity[i] >= 0
                if !slowedByTheStall, abs(a) > axis.maxAcceleration + 2 { breaks.append("frame \(k) axis \(axis.name): \(a) °/s²") }
                previousVelocity[i] = v
            }
            previous = pose
        }
        return (breaks, peakSpeed, previousVelocity)
    }
}

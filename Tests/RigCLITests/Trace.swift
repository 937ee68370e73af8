import Foundation
import RigTestSupport

/// A parsed `--trace` CSV.
struct Trace {
    struct Row: Equatable {
        var time: Double
        var axis: String
        var channel: Int
        var pulse: Double
        var position: Double
        /// Wall-clock seconds since the loop began (the timeline pauses through a stall).
        var wall: Double
        /// Where the simulated camera pointed (nil when the output does not model it).
        var camera: Double?
    }
    var header: String
    var rows: [Row]

    init(path: String) throws {
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
    func frameWallTimes(axes: [String]) -> [Double] {
        stride(from: 0, to: rows.count - rows.count % max(axes.count, 1), by: max(axes.count, 1)).map { rows[$0].wall }
    }

    /// Positions per tick, in axis order.
    func frames(axes: [String]) -> [[Double]] {
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

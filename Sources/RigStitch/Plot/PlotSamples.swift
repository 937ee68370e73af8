import RigCore

/// A program played through the step function for plotting: every frame's time, and per
/// axis its positions, velocities, accelerations and which frames broke a limit (jerk on
/// planned moves, as `rig check` judges it).
struct PlotSamples {
    struct AxisSamples {
        var positions: [Double] = []
        var velocities: [Double] = []
        /// Second differences at the tick rate (what the servo sees), units/s².
        var accelerations: [Double] = []
        /// Indices into `times` of frames that broke a limit on this axis, with which limit.
        var violations: [(index: Int, limit: Limit)] = []
    }

    /// Seconds since the start, one per frame; frame 0 is the start pose at rest.
    var times: [Double] = []
    var axes: [AxisSamples]
    /// When the rig reached each step and had settled (stepped programs).
    var stepArrivals: [(time: Double, step: Int)] = []
    /// When the keyframe path began (after the lead-in), for placing keys.
    var pathStartSeconds: Double?
    var truncated = false

    /// Plays `program` from `startPose`, advancing at every `.ready` like `rig check`.
    init(program: Program, startPose: [Double], maxTicks: Int) {
        let rig = program.rig
        let dt = rig.tickSeconds
        axes = [AxisSamples](repeating: AxisSamples(), count: rig.axes.count)
        // One monitor per axis so a frame breaking limits on two axes marks both.
        var monitors = rig.axes.indices.map { LimitMonitor(axes: [rig.axes[$0]], tickSeconds: dt, startPose: [startPose[$0]]) }
        var player = Player(rig: rig, motion: program.motion, startPose: startPose)
        var frame = startPose
        var previous = startPose

        func record(_ frame: [Double], at time: Double, checkingJerk: Bool) {
            let index = times.count
            times.append(time)
            for i in axes.indices {
                axes[i].positions.append(frame[i])
                let velocity = index == 0 ? 0 : (frame[i] - previous[i]) / dt
                axes[i].accelerations.append(index == 0 ? 0 : (velocity - axes[i].velocities[index - 1]) / dt)
                axes[i].velocities.append(velocity)
                if index > 0, let v = monitors[i].observe([frame[i]], checkingJerk: checkingJerk) {
                    axes[i].violations.append((index, v.limit))
                }
            }
            previous = frame
        }

        record(startPose, at: 0, checkingJerk: true)
        var ticks = 0
        while !player.isFinished {
            guard ticks < maxTicks else {
                truncated = true
                break
            }
            let wasLeadIn = player.phase == .leadIn
            let onPath = player.phase == .path
            let event = player.tick(into: &frame)
            ticks += 1
            if wasLeadIn, player.phase != .leadIn, pathStartSeconds == nil { pathStartSeconds = Double(ticks) * dt }
            record(frame, at: Double(ticks) * dt, checkingJerk: !onPath)
            if case .ready(let step) = event {
                stepArrivals.append((Double(ticks) * dt, step))
                player.advance()
            }
        }
        // One frame at rest after the end, as `rig check` does: a path that ends moving
        // cannot stop in zero time.
        if !truncated { record(frame, at: Double(ticks + 1) * dt, checkingJerk: true) }
    }
}

/// Indices of at most about `limit` points that keep a series' shape: the first and last
/// point, and each bucket's lowest and highest, in time order.
func decimatedIndices(values: [Double], limit: Int) -> [Int] {
    let n = values.count
    guard n > limit, limit >= 4 else { return Array(0..<n) }
    let buckets = (limit - 2) / 2
    var result = [0]
    for b in 0..<buckets {
        let lower = 1 + (n - 2) * b / buckets
        let upper = 1 + (n - 2) * (b + 1) / buckets
        guard lower < upper else { continue }
        var low = lower
        var high = lower
        for i in lower..<upper {
            if values[i] < values[low] { low = i }
            if values[i] > values[high] { high = i }
        }
        if low == high {
            result.append(low)
        } else {
            result.append(min(low, high))
            result.append(max(low, high))
        }
    }
    result.append(n - 1)
    return result
}

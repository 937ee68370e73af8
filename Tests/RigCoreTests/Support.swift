@testable import RigCore
@testable import RigFormat

func servoAxis(
    _ name: String, channel: Int, softMin: Double = -90, softMax: Double = 90, home: Double = 0,
    park: Double? = nil, maxVelocity: Double = 90, maxAcceleration: Double = 180
) -> Axis {
    Axis(
        name: name, kind: .servo, channel: channel, calibration: nil, home: home, park: park,
        softMin: softMin, softMax: softMax, maxVelocity: maxVelocity, maxAcceleration: maxAcceleration, idle: .hold)
}

func simRig(_ axes: [Axis], loopRateHz: Double = 100) -> Rig {
    Rig(name: "test", axes: axes, output: .sim, loopRateHz: loopRateHz)
}

/// What one run of a `Player` emitted.
struct Run {
    var frames: [[Double]] = []
    var events: [(tick: Int, event: PlayerEvent)] = []
}

/// Drives a player tick by tick, calling `advance()` on every `.ready` (as `rig check`
/// does), until it finishes. `onTick` may poke the player (stop it) before each tick.
func drive(
    rig: Rig, motion: Motion, startPose: [Double], maxTicks: Int = 200_000,
    advanceOnReady: Bool = true, onTick: (Int, inout Player) -> Void = { _, _ in }
) -> Run {
    var player = Player(rig: rig, motion: motion, startPose: startPose)
    var frame = startPose
    var run = Run()
    var tick = 0
    while !player.isFinished, tick < maxTicks {
        onTick(tick, &player)
        let event = player.tick(into: &frame)
        run.frames.append(frame)
        if let event {
            run.events.append((tick, event))
            if advanceOnReady, case .ready = event { player.advance() }
        }
        tick += 1
    }
    return run
}

/// The test's own limit arithmetic, written apart from `LimitMonitor`: the worst excess
/// over any limit, relative to that limit (0 when everything is within limits).
/// The frames start from rest at the start pose and, if `endsAtRest`, end at rest (the
/// last frame held once more).
struct LimitExcess: CustomStringConvertible {
    var relative = 0.0
    var what = "nothing"

    init(frames: [[Double]], rig: Rig, startPose: [Double], endsAtRest: Bool = true) {
        let dt = 1 / rig.loopRateHz
        var all = [startPose]
        all += frames
        if endsAtRest, let last = frames.last { all.append(last) }
        for (i, axis) in rig.axes.enumerated() {
            var previousVelocity = 0.0
            let span = axis.softMax - axis.softMin
            for k in 1..<all.count {
                let x = all[k][i]
                let velocity = (x - all[k - 1][i]) / dt
                let acceleration = (velocity - previousVelocity) / dt
                previousVelocity = velocity
                note((axis.softMin - x) / span, "axis \(i) frame \(k) position \(x) below \(axis.softMin)")
                note((x - axis.softMax) / span, "axis \(i) frame \(k) position \(x) above \(axis.softMax)")
                note(abs(velocity) / axis.maxVelocity - 1, "axis \(i) frame \(k) velocity \(velocity) vs \(axis.maxVelocity)")
                note(abs(acceleration) / axis.maxAcceleration - 1, "axis \(i) frame \(k) acceleration \(acceleration) vs \(axis.maxAcceleration)")
            }
        }
    }

    private mutating func note(_ excess: Double, _ text: @autoclosure () -> String) {
        if excess > relative {
            relative = excess
            what = text()
        }
    }

    var description: String { "worst excess \(relative): \(what)" }
}

/// Parses an inline program whose rig is embedded or named `rig.json` (served from `rigText`).
func parseProgram(_ text: String, rigText: String? = nil, file: String = "p.json") throws(FileError) -> Program {
    try ProgramParser.parse(text: text, file: file) { path, at throws(FileError) in
        guard let rigText else { throw at.error("cannot read rig file \"\(path)\": no such file") }
        return (rigText, path)
    }
}

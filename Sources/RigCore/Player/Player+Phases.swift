import RigSky

/// `Player`'s ticks, one function per phase, with its shots and its moves: what
/// `Player.tick` dispatches to (the state they share is declared in Player.swift).
extension Player {
    // MARK: - One tick per phase

    /// A continuous program: the tracks at this tick's time, a shot on the move every
    /// `--interval`, and the park at the end.
    mutating func pathTick() -> PlayerEvent? {
        guard case .continuous(let tracks, let duration) = motion else { return nil }
        var event: PlayerEvent?
        phaseTicks += 1
        let t = Double(phaseTicks) * dt
        for i in rig.axes.indices {
            if let track = tracks[i] { positions[i] = track.value(at: t, cursor: &cursors[i]) }
        }
        if let end = pathShotEndsAtTick, phaseTicks >= end {
            // Its shutter time is up: the frame is logged with what the camera reported.
            event = .shot(.ended(step: pathShots - 1, bracket: 1))
            pathShotEndsAtTick = nil
        } else if let intervalTicks, shooting.timing != nil, (phaseTicks - 1) % intervalTicks == 0 {
            // A continuous program shoots on the move (`--interval`): no hold, the
            // path cannot stop within the limits; the camera needs short exposures.
            event = .shot(.started(step: pathShots, bracket: 1))
            pathShots += 1
            // Ended before the next one starts (an interval is at least a shot and its
            // after-shot wait, so a tick before at the latest).
            if intervalTicks > 1 { pathShotEndsAtTick = phaseTicks + max(1, min(shotTicks, intervalTicks - 1)) }
        }
        if t >= duration {
            event = .programEnded(stopped: false)
            // A path that ends on the move (a linear last key) stops on its end at once:
            // the checker judges that one step to rest. The park then starts a tick later
            // from rest, so its first step is not added on top of it.
            beginPark(fromRestAfterThisTick: positions != previous)
        }
        return event
    }

    /// On the way to a step: at the end of the move (and of an overshoot's final
    /// approach), its settle, or its shot at once when it has none.
    mutating func moveTick(to step: Int) -> PlayerEvent? {
        guard advanceMove(), case .stepped(let steps) = motion, !beginFinalApproach() else { return nil }
        phaseTicks = settleTicks(steps[step])
        phase = .settling(step: step)
        settleElapsedTicks = 0
        settleReported = false
        // A measured settle looks at least once (the next tick) before the shot.
        guard shooting.measuredSettle == nil else { return nil }
        return phaseTicks == 0 ? beginShooting(step) : nil
    }

    /// A measured settle: still by the measurement, or the timeout and then the fixed
    /// settle (from the move's end); reported, then the shot on the next tick.
    mutating func measuredSettleTick(_ step: Int) -> PlayerEvent? {
        if settleReported {
            settleReported = false
            // Seen still, and still by the latest measurement (or timed out): shoot. Moving
            // again since: measure on (a new `.settled` follows).
            if !settleWasMeasured || measuredStill { return beginShooting(step) }
        }
        settleElapsedTicks += 1
        let seconds = Double(settleElapsedTicks) * dt
        if measuredStill {
            settleReported = true
            settleWasMeasured = true
            return .settled(step: step, seconds: seconds, measured: true)
        }
        let timeout = tickCount(seconds: shooting.measuredSettle?.timeoutSeconds ?? 0, tickSeconds: dt)
        guard settleElapsedTicks >= max(timeout, phaseTicks) else { return nil }
        settleReported = true
        settleWasMeasured = false
        return .settled(step: step, seconds: seconds, measured: false)
    }

    /// Waiting at a step: ready reported once, then whatever was asked (home, a jump, a
    /// redo, next), next paced so an interval's shots start on their slots.
    mutating func waitTick(at step: Int) -> PlayerEvent? {
        guard case .stepped(let steps) = motion else { return nil }
        if readyPending {
            readyPending = false
            return .ready(step: step)
        }
        if pendingHome { return beginHomeMove(after: step) }
        if let jump = pendingJump {
            pendingJump = nil
            pendingAdvance = false
            pendingRedo = false
            slotTick = nil
            return startMove(to: jump, steps: steps)
        }
        if pendingRedo {
            pendingRedo = false
            // A sky track's frame moves to where its target is now before it is shot again.
            if atStep == step, trackSecondsAtStart != nil, steps[step].aim != nil {
                pendingAdvance = false
                slotTick = nil
                return startMove(to: step, steps: steps)
            }
            if atStep == step {
                pendingAdvance = false
                slotTick = nil
                return beginShooting(step)
            }
        }
        guard pendingAdvance else { return nil }
        guard step + 1 < steps.count else {
            pendingAdvance = false
            beginPark()
            return .programEnded(stopped: false)
        }
        if let interval = intervalTicks(after: step), let last = lastShotStartTick {
            // Start the move late enough that the next shot starts on its slot.
            let slot = last + interval
            // Planned once per wait: the rig stands still, so the move is the same each tick.
            let start = plannedMoveStartTick ?? (slot - ticksToReach(step + 1, steps: steps))
            plannedMoveStartTick = start
            if tickIndex + 1 < start { return nil }
            plannedMoveStartTick = nil
            slotTick = slot
            slotMissReported = false
        }
        pendingAdvance = false
        return startMove(to: step + 1, steps: steps)
    }

    /// On the way home between steps (`rig: home`): its settle, then at home.
    mutating func homeMoveTick(after: Int) -> PlayerEvent? {
        guard advanceMove(), case .stepped(let steps) = motion, !beginFinalApproach() else { return nil }
        // The settle of the step it left: the program's, unless that step has its own.
        phaseTicks = settleTicks(steps[min(max(after, 0), steps.count - 1)])
        phase = .settlingHome(after: after)
        guard phaseTicks == 0 else { return nil }
        phase = .atHome(after: after)
        return .readyAtHome(after: after)
    }

    /// At home between steps: a jump, or next (the step after the one it left).
    mutating func atHomeTick(after: Int) -> PlayerEvent? {
        guard case .stepped(let steps) = motion else { return nil }
        if pendingHome {
            // Asked again while there: settled already.
            pendingHome = false
            pendingAdvance = false
            return .readyAtHome(after: after)
        }
        if let jump = pendingJump {
            pendingJump = nil
            pendingAdvance = false
            return startMove(to: jump, steps: steps)
        }
        pendingRedo = false
        guard pendingAdvance else { return nil }
        pendingAdvance = false
        guard after + 1 < steps.count else {
            beginPark()
            return .programEnded(stopped: false)
        }
        return startMove(to: after + 1, steps: steps)
    }

    /// A stop: every axis decelerates at its limit, then the park.
    mutating func brakeTick() -> PlayerEvent? {
        var moving = false
        for i in rig.axes.indices {
            let v = velocities[i]
            let dv = rig.axes[i].maxAcceleration * dt
            let next = abs(v) <= dv ? 0 : v - (v > 0 ? dv : -dv)
            positions[i] = min(max(positions[i] + next * dt, rig.axes[i].softMin), rig.axes[i].softMax)
            if next != 0 { moving = true }
        }
        guard !moving else { return nil }
        beginPark()
        return .programEnded(stopped: true)
    }

    /// A move that overshot (backlash) has done its overshoot: the final approach, from
    /// below, begins. False when there was none to do.
    mutating func beginFinalApproach() -> Bool {
        guard approachPending else { return false }
        approachPending = false
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        return true
    }

    /// A move to `step` begins, and its first frame is taken this tick.
    mutating func startMove(to step: Int, steps: [Step]) -> PlayerEvent {
        beginMove(to: step, steps: steps)
        _ = advanceMove()
        return .moveStarted(step: step)
    }

    func settleTicks(_ step: Step) -> Int {
        tickCount(seconds: step.settleSeconds, tickSeconds: dt)
    }

    /// The ticks from `step`'s shot to the next one's, when the shots are paced.
    func intervalTicks(after step: Int) -> Int? {
        if let stepIntervalTicks, stepIntervalTicks.indices.contains(step) { return stepIntervalTicks[step] }
        return intervalTicks
    }

    /// Settled at `step`: hold for its shots (none without a camera, but an interval's
    /// slot still holds the `.ready`), starting the first at once if it may.
    mutating func beginShooting(_ step: Int) -> PlayerEvent? {
        plannedMoveStartTick = nil
        phase = .shooting(step: step)
        atStep = step
        bracket = 0
        shotOpen = false
        return shootingTick(step)
    }

    /// One tick held at `step`: start the next shot when its slot and the after-shot
    /// wait allow, end it when it is done, then wait for the trigger.
    mutating func shootingTick(_ step: Int) -> PlayerEvent? {
        let now = tickIndex + 1
        if !shotOpen {
            if bracket == 0, let slot = slotTick, now > slot, !slotMissReported {
                slotMissReported = true
                return .shot(.slotMissed(step: step, slotSeconds: Double(slot) * dt))
            }
            let slot = bracket == 0 ? (slotTick ?? 0) : 0
            guard now >= max(earliestShotTick, slot) else { return nil }
            if bracket == 0 {
                lastShotStartTick = now
                slotTick = nil
            }
            guard shooting.timing != nil else {
                // No camera: the settled moment is the "shot" an interval counts from.
                phase = .waiting(step: step)
                return .ready(step: step)
            }
            shotOpen = true
            shotElapsedTicks = 0
            shotDoneRequested = false
            return .shot(.started(step: step, bracket: bracket + 1))
        }
        shotElapsedTicks += 1
        let done = shooting.selfTimed ? shotElapsedTicks >= frameTicks(step: step, bracket: bracket) : shotDoneRequested
        guard done else { return nil }
        shotOpen = false
        earliestShotTick = now + afterShotTicks
        let ended = PlayerEvent.shot(.ended(step: step, bracket: bracket + 1))
        bracket += 1
        if bracket >= (shooting.timing?.shotsPerStep ?? 1) {
            phase = .waiting(step: step)
            readyPending = true
        }
        return ended
    }

    /// The ticks a self-timed shot of frame `bracket` at `step` holds: its own exposure's
    /// when the plan knows it, else the program's.
    func frameTicks(step: Int, bracket: Int) -> Int {
        if let frameShotTicks, frameShotTicks.indices.contains(step), frameShotTicks[step].indices.contains(bracket) {
            return frameShotTicks[step][bracket]
        }
        return shotTicks
    }

    /// Ticks from here to settled at `step`: the move (with its backlash overshoot) and
    /// the settle time. Plans into scratch storage: no allocation once sized.
    mutating func ticksToReach(_ step: Int, steps: [Step]) -> Int {
        for i in rig.axes.indices { target[i] = steps[step].pose[i] }
        aimAtSky(step, steps: steps)
        var total = settleTicks(steps[step])
        if lashed, approachWaypoint() {
            scratchMove.plan(from: positions, to: waypoint, axes: rig.axes, tickSeconds: dt)
            total += scratchMove.ticks + arrivalTicks
            scratchMove.plan(from: waypoint, to: target, axes: rig.axes, tickSeconds: dt)
        } else {
            scratchMove.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        }
        // A move is seen to have arrived on the tick after its last frame is sampled, at the
        // soonest the tick after it began: a move of no length (a still head, two equal
        // poses) still takes that one tick, which is what made every such slot one late.
        // Each move arrives once its shaped output has (`advanceMove`).
        return total + max(scratchMove.ticks + arrivalTicks, 1)
    }

    /// For a sky track's step on the clock: `target`'s two track axes (holding the step's
    /// planned pose) to where the target will be (or, past the track's change-over, its
    /// hold or pan) at the middle of the step's first frame —
    /// after the move (planned once to time it), the settle, and the interval's slot when it
    /// is later — within the soft limits. Allocates nothing (the loop thread calls it).
    mutating func aimAtSky(_ step: Int, steps: [Step]) {
        guard let clock = trackSecondsAtStart, let track = steps[step].aim else { return }
        let az = track.mount.azimuthAxis
        let alt = track.mount.altitudeAxis
        guard rig.axes.indices.contains(az), rig.axes.indices.contains(alt) else { return }
        let settle = settleTicks(steps[step])
        let halfFrame = Double(frameTicks(step: step, bracket: 0)) * dt / 2
        var moveTicks = 0
        for _ in 0..<2 {
            let shotTick = max(tickIndex + moveTicks + settle, slotTick ?? 0)
            let seconds = clock + Double(shotTick) * dt + halfFrame
            // The target's pose, or after the track's change-over its hold or pan.
            let pose = track.aim(atSeconds: seconds, previousPan: steps[step].pose[az])
            target[az] = min(max(pose.pan, rig.axes[az].softMin), rig.axes[az].softMax)
            target[alt] = min(max(pose.tilt, rig.axes[alt].softMin), rig.axes[alt].softMax)
            scratchMove.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
            moveTicks = scratchMove.ticks
        }
    }

    /// Fills `waypoint` with where to overshoot to so that every axis with backlash
    /// makes its final approach to `target` upwards, over at least its backlash (as far
    /// as the soft limits allow). True if any axis needs it.
    mutating func approachWaypoint() -> Bool {
        var needed = false
        for i in rig.axes.indices {
            let axis = rig.axes[i]
            waypoint[i] = target[i]
            guard axis.backlashDeg > 0, positions[i] > target[i] - axis.backlashDeg else { continue }
            let below = max(target[i] - axis.backlashDeg, axis.softMin)
            if below < target[i], below < positions[i] {
                waypoint[i] = below
                needed = true
            }
        }
        return needed
    }

    /// Samples the next tick of the current move; true once it has arrived: the reference
    /// at its target and, with input shapers, the shaped output too (`arrivalTicks` later).
    @inline(__always)
    mutating func advanceMove() -> Bool {
        if moveTick < move.ticks + arrivalTicks {
            moveTick += 1
            move.sample(tick: moveTick, tickSeconds: dt, into: &positions)
        }
        return moveTick >= move.ticks + arrivalTicks
    }

    /// Ticks after a move's reference arrives until its shaped output has (0 unshaped, or
    /// once the shaper is bypassed).
    var arrivalTicks: Int { shaperBypassed ? 0 : shaper.tailTicks }

    mutating func beginMove(to step: Int, steps: [Step]) {
        plannedMoveStartTick = nil
        for i in rig.axes.indices { target[i] = steps[step].pose[i] }
        aimAtSky(step, steps: steps)
        approachPending = lashed && approachWaypoint()
        move.plan(from: positions, to: approachPending ? waypoint : target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        atStep = nil
        phase = .moving(step: step)
    }

    /// Leaves step `after` for the home pose. The excursion breaks the interval's rhythm:
    /// the next step shoots as soon as it has settled, and the interval counts from there.
    mutating func beginHomeMove(after: Int) -> PlayerEvent {
        pendingHome = false
        pendingAdvance = false
        pendingRedo = false
        plannedMoveStartTick = nil
        slotTick = nil
        lastShotStartTick = nil
        for i in rig.axes.indices { target[i] = rig.axes[i].home }
        approachPending = lashed && approachWaypoint()
        move.plan(from: positions, to: approachPending ? waypoint : target, axes: rig.axes, tickSeconds: dt)
        moveTick = 0
        atStep = nil
        phase = .movingHome(after: after)
        _ = advanceMove()
        return .homeMoveStarted(after: after)
    }

    /// `fromRestAfterThisTick`: the rig moved this tick; the park holds the pose one
    /// tick (its sample at 0) before its first step.
    mutating func beginPark(fromRestAfterThisTick: Bool = false) {
        approachPending = false
        atStep = nil
        for i in rig.axes.indices { target[i] = rig.axes[i].park ?? positions[i] }
        move.plan(from: positions, to: target, axes: rig.axes, tickSeconds: dt)
        moveTick = fromRestAfterThisTick ? -1 : 0
        phase = .parking
    }
}

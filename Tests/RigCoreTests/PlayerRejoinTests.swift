import Testing

@testable import RigCore

/// A group's keyframes path rejoined part-way (`Player.rejoin`): a restarted rig leads in
/// from where it stands to its path's pose at a path time, at rest and within its limits,
/// then goes on along the path from that frame, its frames on the move numbered from it.
extension PlayerTests {
    func pathPose(_ t: Double) -> [Double] {
        guard case .continuous(let tracks, _) = sweep else { return [] }
        return tracks.map { $0?.value(at: t) ?? 0 }
    }

    /// Asked during the first key's lead-in or while holding at the first key, from either
    /// side of the path: the rig leads in within its limits to the pose of the path's frame
    /// at or before t0, exactly, and is at rest there (`.readyToRejoin` with its tick); it
    /// holds there until `advance()`, which takes no frame (the loop ramps in from rest),
    /// and then goes on along the path, frame by frame from that tick.
    @Test(arguments: [(1.5, 5), (2.374, 5), (0.2, 400), (3.5, 400)])
    func leadsInToThePathsPoseAtT0WithinTheLimits(t0: Double, askAtTick: Int) throws {
        let start = [30.0, -20.0]
        var player = Player(rig: rig, motion: sweep, startPose: start, holdsBeforePath: true)
        var pose = start
        var frames: [[Double]] = []
        var events: [PlayerEvent] = []
        for tick in 0..<1500 {
            if tick == askAtTick { player.rejoin(pathSeconds: t0) }
            if let e = player.tick(into: &pose) { events.append(e) }
            frames.append(pose)
        }
        let k = Int((t0 / 0.01 + 1e-6).rounded(.down))
        #expect(events.last == .readyToRejoin(pathTick: k), "\(events)")
        #expect(events.filter { $0 == .readyToStart }.count == (askAtTick > 300 ? 1 : 0), "\(events)")
        // At rest exactly at the path's pose of frame k.
        #expect(pose == pathPose(Double(k) * 0.01), "\(pose) vs \(pathPose(Double(k) * 0.01))")
        #expect(frames.suffix(50).allSatisfy { $0 == pose }, "held there")
        #expect(player.phase == .waitingToStart)
        let excess = LimitExcess(frames: frames, rig: rig, startPose: start)
        #expect(excess.relative <= 1e-6, "\(excess)")
        for f in frames {
            #expect(f[0] >= -90 && f[0] <= 90 && f[1] >= -45 && f[1] <= 45, "\(f)")
        }
        // Go: no frame taken on the tick it goes (the timeline starts from rest there)…
        player.advance()
        let held = pose
        #expect(player.tick(into: &pose) == nil)
        #expect(pose == held)
        #expect(player.phase == .path)
        // …then the path's next frames, from tick k + 1 on.
        for n in 1...3 {
            _ = player.tick(into: &pose)
            #expect(pose == pathPose(Double(k + n) * 0.01), "frame \(k + n)")
        }
    }

    /// Shooting on the move every second: the frames due by the rejoined moment are behind
    /// it (not shot again), the next is the first shot after it, numbered from the path's
    /// time; with fewer frames shot before (`framesShot`, from its log), it leads in to
    /// the last one's moment instead and shoots the next one first.
    @Test(arguments: [(2.5, nil, 3), (2.5, 1, 1), (2.5, 0, 0), (1.0, nil, 1)] as [(Double, Int?, Int)])
    func framesOnTheMoveGoOnFromTheRejoinedFrame(t0: Double, framesShot: Int?, next: Int) throws {
        let timing = ShotTiming(focusSeconds: 0, shutterHoldSeconds: 0.05, exposureWindowSeconds: 0.05, afterShotSeconds: 0, shotsPerStep: 1)
        var player = Player(
            rig: rig, motion: sweep, startPose: [-60, 0], shooting: ShootingPlan(timing: timing, intervalSeconds: 1),
            holdsBeforePath: true)
        var pose = [-60.0, 0]
        player.rejoin(pathSeconds: t0, framesShot: framesShot)
        var ready: Int?
        for _ in 0..<2000 where ready == nil {
            if case .readyToRejoin(let k) = player.tick(into: &pose) { ready = k }
        }
        let k = try #require(ready)
        // Frame n is shot at tick 1 + (n − 1) · 100.
        let expectedTick =
            framesShot.map { min(Int((t0 / 0.01 + 1e-6).rounded(.down)), $0 == 0 ? 0 : 1 + ($0 - 1) * 100) } ?? Int((t0 / 0.01 + 1e-6).rounded(.down))
        #expect(k == expectedTick)
        #expect(pose == pathPose(Double(k) * 0.01))
        player.advance()
        var shots: [Int] = []
        for _ in 0..<600 {
            if case .shot(.started(let step, _)) = player.tick(into: &pose) { shots.append(step) }
        }
        // Every frame after the rejoined one once, in order, to the path's end (4 s: frames 1…4).
        #expect(shots == Array(next..<4), "\(shots)")
    }

    /// Not a group's path (no hold before it), a stepped program, or a path under way: ignored.
    @Test func ignoredWhereItDoesNotApply() {
        var alone = Player(rig: rig, motion: sweep, startPose: [-60, 0])
        alone.rejoin(pathSeconds: 1)
        var pose = [-60.0, 0]
        var events: [PlayerEvent] = []
        for _ in 0..<100 { if let e = alone.tick(into: &pose) { events.append(e) } }
        #expect(!events.contains { if case .readyToRejoin = $0 { true } else { false } })
        var group = Player(rig: rig, motion: sweep, startPose: [-60, 0], holdsBeforePath: true)
        for _ in 0..<5 { _ = group.tick(into: &pose) }
        group.advance()
        for _ in 0..<5 { _ = group.tick(into: &pose) }
        #expect(group.phase == .path)
        group.rejoin(pathSeconds: 2)
        for _ in 0..<50 { _ = group.tick(into: &pose) }
        #expect(group.phase == .path, "the path went on")
    }
}

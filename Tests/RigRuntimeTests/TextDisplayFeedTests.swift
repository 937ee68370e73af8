import Foundation
import Logging
import RigCore
import RigTestSupport
import Testing

@testable import RigRuntime

/// The board's LCD outside Cascable step sync: where the program is and what the rig
/// does, in lines the firmware takes, and rarely enough to leave the link to the servos.
@Suite struct TextDisplayFeedTests {
    @Test func linesSayTheStepOrTheClockAndTheState() {
        #expect(TextDisplayFeed.lines(PlaybackProgress(elapsedSeconds: 3, step: 3, stepCount: 12, phase: .settling)) == ("step 3/12", "settling"))
        #expect(TextDisplayFeed.lines(PlaybackProgress(elapsedSeconds: 12.7, totalSeconds: 59.2, phase: .playing)) == ("t 12/60 s", "playing"))
        // Long state names and big numbers are cut to the firmware's 15 characters.
        let long = TextDisplayFeed.lines(PlaybackProgress(elapsedSeconds: 86_399, totalSeconds: 86_400, phase: .settlingAtHome))
        #expect(long.line1.count <= 15 && long.line2 == "settling at hom")
        let steps = TextDisplayFeed.lines(PlaybackProgress(elapsedSeconds: 0, step: 100_000, stepCount: 100_000, phase: .moving))
        #expect(steps.line1.count <= 15)
    }

    @Test func aNewStateShowsAtOnceAClockOnlyEveryFewSeconds() {
        var feed = TextDisplayFeed()
        let playing = { (t: Double) in PlaybackProgress(elapsedSeconds: t, totalSeconds: 60, phase: .playing) }
        #expect(feed.update(playing(0), nowSeconds: 100) != nil)
        #expect(feed.update(playing(0.1), nowSeconds: 100.1) == nil, "nothing changed")
        #expect(feed.update(playing(1.2), nowSeconds: 101.2) == nil, "only the clock: not yet")
        #expect(feed.update(playing(5.3), nowSeconds: 105.3)?.line1 == "t 5/60 s")
        #expect(feed.update(PlaybackProgress(elapsedSeconds: 5.4, totalSeconds: 60, phase: .braking), nowSeconds: 105.4)?.line2 == "braking")
        var stepped = TextDisplayFeed()
        #expect(stepped.update(PlaybackProgress(elapsedSeconds: 0, step: 1, stepCount: 3, phase: .moving), nowSeconds: 0) != nil)
        #expect(stepped.update(PlaybackProgress(elapsedSeconds: 0.2, step: 1, stepCount: 3, phase: .settling), nowSeconds: 0.2)?.line2 == "settling")
        #expect(stepped.update(PlaybackProgress(elapsedSeconds: 0.3, step: 2, stepCount: 3, phase: .moving), nowSeconds: 0.3)?.line1 == "step 2/3")
    }

    final class DisplayingTrigger: StepTrigger, @unchecked Sendable {
        var label: String { "display" }
        func start(_ controls: StepControls) throws {}
        func handle(_ event: PlayerEvent, stepCount: Int) {}
        func stop() {}
        var drivesTextDisplay: Bool { true }
    }

    func run(trigger: StepTrigger?) throws -> [[String]] {
        let rig = testRig()
        let motion: Motion = .continuous(
            tracks: [AxisTrack(keys: [Keyframe(time: 0, value: 0), Keyframe(time: 1.5, value: 20)]), nil], durationSeconds: 1.5)
        let output = RecordingOutput()
        var options = SessionOptions(loop: LoopOptions(realtime: false, stopWhenLimited: false))
        options.trapSignals = false
        options.stopOnStreamFailure = false
        let session = RigSession(
            rig: rig, source: Player(rig: rig, motion: motion, startPose: rig.homePose), output: output,
            startPose: rig.homePose, trigger: trigger, options: options, logger: Logger(label: "test"))
        _ = try session.run()
        return output.log.withLock { $0.texts }
    }

    @Test func theSessionShowsProgressOnAnOutputsDisplayUnlessTheTriggerDoes() throws {
        let shown = try run(trigger: nil)
        #expect(!shown.isEmpty)
        #expect(shown.allSatisfy { $0.count == 2 && $0.allSatisfy { $0.count <= 15 } })
        #expect(shown.contains { $0[0].hasPrefix("t ") && $0[0].hasSuffix("/2 s") }, "\(shown)")
        #expect(try run(trigger: DisplayingTrigger()).isEmpty)
    }
}

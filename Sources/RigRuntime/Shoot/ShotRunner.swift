import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigSky
import Synchronization

/// Runs a stepped program's shots beside the loop, on the session's event thread: fires
/// the camera when the player starts a shot and tells the loop when the camera is done,
/// and writes the shot log (`start`, a `shot` per exposure, `missed`, `end`), flushed
/// after every event.
///
/// Without a camera (none in the rig, `--no-shoot`, Cascable shooting) a step's "shot" is
/// the time the rig held still at it: from `.ready` until it moved on.
public final class ShotRunner: @unchecked Sendable {
    public struct Requests: Sendable {
        public var shotDone: @Sendable () -> Void
        public var stop: @Sendable () -> Void
        /// Where the rig points now (the loop's last frame): logged for a frame whose pose
        /// is not its step's planned one (a sky track's, aimed when it is shot).
        public var pose: @Sendable () -> [Double]?
        public init(
            shotDone: @escaping @Sendable () -> Void, stop: @escaping @Sendable () -> Void, pose: @escaping @Sendable () -> [Double]? = { nil }
        ) {
            self.shotDone = shotDone
            self.stop = stop
            self.pose = pose
        }
    }

    private let steps: [Step]
    private let axisNames: [String]
    private let camera: Camera?
    private let timing: ShotTiming?
    private let writer: ShotLogWriter?
    private let logger: Logger
    private let display: @Sendable (String) -> Void
    private let requests = Mutex<Requests?>(nil)
    // Event thread only.
    private var shotSteps: Set<Int>
    private var shotStart: [Int: Double] = [:]
    /// The wall-clock time each step's last shot began (the `shot` event's `at`).
    private var shotWallClock: [Int: String] = [:]
    /// The pose each aimed step's frame was really shot at (a sky track's).
    private var shotPose: [Int: [Double]] = [:]
    /// The shot the camera was fired for and that has not ended: logged as interrupted if
    /// the run stops before it does.
    private var shotUnderWay: (step: Int, bracket: Int, start: Double, at: String)?
    /// A group's frame (`fireInGroup`) until the group link logs it: under way once its
    /// camera was asked (a timer's) or its shutter time came (a camera that fires at a time).
    private var groupShot: (step: Int, start: Double, atNs: Int64, firesAtTime: Bool)?
    private let groupShotAsked = Atomic<Bool>(false)
    private var redoing: [Int: Bool] = [:]
    /// A keyframes path's frames on the move whose time was up before the camera reported
    /// them (the path does not wait): logged, in order, once it has (event thread).
    private var framesAwaitingReports: [(step: Int, start: Double, end: Double, at: String?)] = []
    private var missedSlot: [Int: Double] = [:]
    private var holdingSince: (step: Int, time: Double, at: String)?
    /// Each step's last measured settle (`PlayerEvent.settled`), for its shot events.
    private var settles: [Int: (seconds: Double, measured: Bool)] = [:]
    private var lastStep: Int?
    private var ended: Bool?
    private let fault = Mutex<String?>(nil)
    /// The shot the camera failed (0-based step, 1-based frame) and why: logged `missed`,
    /// not interrupted.
    private let cameraFailed = Mutex<(step: Int, bracket: Int, reason: String)?>(nil)
    /// Set when the program is over (its end, or the runner's): a shot cut short after it
    /// is no fault.
    private let programOver = Atomic<Bool>(false)
    private let logFailure = Mutex<String?>(nil)
    /// What the camera reported for each frame it confirmed, until the player ends the
    /// shot and the runner logs it (the camera's thread writes, the event thread takes).
    private let reports = Mutex<[ShotKey: ShotReport]>([:])
    private let pendingImages = Mutex<[ShotLogImage]>([])
    private let observer = Mutex<(@Sendable (ShotLogEvent) -> Void)?>(nil)
    /// A timelapse's exposure ramp: each frame's settings, and the measures it follows (event thread).
    private var ramp: ExposureRampRunner?
    private var rampSettings: [Int: (settings: ExposureSettings, seconds: Double)] = [:]
    /// The photographer's nudge on the ramp (± EV), set from any thread; nil without a ramp.
    public let rampNudge: RampNudge?
    /// False in a group: the rig's frames are fired on the group's timer and logged by the
    /// group link (`logFrame`), not the player's holds. Set before the run.
    public var logsHolds = true
    /// The frames whose `shot` event is logged (event thread).
    private var recordedShots: Set<ShotKey> = []
    public private(set) var shotsTaken = 0
    public private(set) var slotsMissed = 0
    public private(set) var shotsInterrupted = 0
    /// Frames the camera took but that could not be copied (they are on its card).
    public private(set) var downloadsFailed = 0

    /// - Parameters:
    ///   - alreadyShot: 0-based steps a resumed run shot before (their new shots are redos).
    ///   - start: the `start` event to write first; nil with no writer.
    ///   - rampNudge: the nudge the ramp reads (the caller keeps it to set it: keys, `rig serve`).
    public init(
        steps: [Step], axisNames: [String], camera: Camera?, timing: ShotTiming?, writer: ShotLogWriter?,
        start: ShotLogStart?, alreadyShot: Set<Int> = [], ramp: ExposureRamp? = nil, rampNudge: RampNudge = RampNudge(), logger: Logger,
        display: @escaping @Sendable (String) -> Void
    ) {
        self.ramp = ramp.map { ExposureRampRunner($0, nudge: rampNudge) }
        self.rampNudge = ramp == nil ? nil : rampNudge
        self.steps = steps
        self.axisNames = axisNames
        self.camera = camera
        self.timing = camera == nil ? nil : timing
        self.writer = writer
        self.logger = logger
        self.display = display
        shotSteps = alreadyShot
        if let start { write(.start(start)) }
        // A camera that measures its frames reports them here (logged after their shots).
        (camera as? ImageReporting)?.onImage { [weak self] in self?.recordImage($0) }
    }

    /// A resumed run: the ramp goes on from where the earlier run's log left it (the last
    /// frame's ramp EV, and its measured frames for `auto`, dated by their wall-clock times
    /// against `now`). Nothing without a ramp or a ramp EV in the log.
    public func resumeRamp(from log: ShotLog, now: Double = Date().timeIntervalSince1970) {
        guard ramp != nil else { return }
        let shots = log.completeShots.filter { $0.rampEV != nil }
        guard let last = shots.last, let lastEV = last.rampEV else { return }
        var images: [Int: ShotLogImage] = [:]
        for event in log.events { if case .image(let image) = event, (image.bracket ?? 1) == 1 { images[image.step] = image } }
        let measures = shots.compactMap { shot -> (seconds: Double, sceneEV: Double, clippedHigh: Double)? in
            guard let ev = shot.rampEV, let image = images[shot.step], let at = shot.at.flatMap(UTCTime.parse) else { return nil }
            // What the loop read then (the exposure the camera made), else what it made.
            let made = ExposureValue.made(shot.settings)?.ev100 ?? ev
            return (at - now, image.sceneEV ?? made + image.brightnessEV, image.clippedHigh)
        }
        ramp?.resume(lastEV: lastEV, measures: measures)
        logger.info("the ramp goes on from EV \(fixed(lastEV, 2)) (step \(last.step)), with \(measures.count) measured frames")
    }

    /// Called with every event as it is logged (on the thread that logs it).
    public func observe(_ handler: @escaping @Sendable (ShotLogEvent) -> Void) {
        observer.withLock { $0 = handler }
    }

    /// The loop is running: how to reach it.
    public func attach(_ requests: Requests) {
        self.requests.withLock { $0 = requests }
    }

    /// The camera or the log failed; the run was stopped because of it.
    public var faultMessage: String? { fault.withLock { $0 } }

    /// Why the shot log is incomplete (a write failed: a full disk, an I/O error); nil
    /// while every event reached the disk. The run goes on (the camera keeps shooting) but
    /// ends with exit 1; the log holds every event before the failure, on whole lines.
    public var logIncomplete: String? { logFailure.withLock { $0 } }

    /// A frame's measures, from the camera's thread (a download finishes after its shot, a
    /// simulated camera measures as it shoots): logged after the frame's `shot` event, with
    /// the next event, or at the end.
    public func recordImage(_ image: ShotLogImage) {
        pendingImages.withLock { $0.append(image) }
    }

    /// Writes the measures whose shot is logged (all of them at the end).
    private func writePendingImages(all: Bool = false) {
        let ready = pendingImages.withLock { pending -> [ShotLogImage] in
            let isReady = { (image: ShotLogImage) in all || self.recordedShots.contains(ShotKey(step: image.step - 1, bracket: image.bracket ?? 1)) }
            defer { pending.removeAll(where: isReady) }
            return pending.filter(isReady)
        }
        for var image in ready {
            // The ramp reads the scene from the settings the camera made (`record`), and the
            // log says what it read.
            if let shot = rampSettings.removeValue(forKey: image.step - 1) {
                ramp?.measured(image.brightnessEV, settingsEV: shot.settings.ev100, clippedHigh: image.clippedHigh, seconds: shot.seconds)
                if ramp != nil { image.sceneEV = shot.settings.ev100 + image.brightnessEV }
            }
            write(.image(image))
        }
    }

    /// Feed every loop event here (the session does, for a part).
    public func handle(_ event: LoopEvent) {
        if !framesAwaitingReports.isEmpty { logFramesReported(all: false) }
        writePendingImages()
        guard case .player(let playerEvent, let tickTime) = event else { return }
        // Tick times are whole ticks; rounding to the µs drops the binary noise (0.94000000000001).
        let time = (tickTime * 1e6).rounded() / 1e6
        switch playerEvent {
        case .shot(.started(let step, let bracket)):
            if let slot = missedSlot.removeValue(forKey: step) {
                write(.missed(ShotLogMissed(step: step + 1, slotSeconds: slot, startSeconds: time)))
            }
            shotStart[step] = time
            // A frame whose pose is not its step's planned one: a sky track's, or a path's
            // on the move (a keyframes program has no steps).
            if steps.isEmpty || (steps.indices.contains(step) && steps[step].aim != nil), let pose = requests.withLock({ $0 })?.pose() { shotPose[step] = pose }
            // The frame's true time: now, as the camera is fired (the tick's time is on the
            // run's own clock).
            let at = UTCTime.iso(Date().timeIntervalSince1970)
            shotWallClock[step] = at
            shotUnderWay = (step, bracket, time, at)
            fire(step: step, bracket: bracket, at: time)
        case .shot(.ended(let step, _)) where steps.isEmpty:
            // A path's frame on the move: the path went on; logged once the camera said.
            shotUnderWay = nil
            framesAwaitingReports.append((step, shotStart[step] ?? time, time, shotWallClock[step]))
            logFramesReported(all: false)
        case .shot(.ended(let step, let bracket)):
            shotUnderWay = nil
            if bracket == 1 {
                // A bracket's later frames are redos exactly when its first one is.
                redoing[step] = shotSteps.contains(step)
                shotSteps.insert(step)
            }
            let report = reports.withLock { $0.removeValue(forKey: ShotKey(step: step, bracket: bracket)) }
            record(
                step: step, start: shotStart[step] ?? time, end: time, redo: redoing[step] ?? false,
                bracket: (timing?.shotsPerStep ?? 1) > 1 ? bracket : nil, report: report ?? .none, at: shotWallClock[step])
        case .shot(.slotMissed(let step, let slot)):
            slotsMissed += 1
            missedSlot[step] = slot
            let message =
                "MISSED the interval slot of step \(step + 1) (due at t=\(fixed(slot, 2))s): the move, settle or last shot took longer than planned; shooting late"
            logger.error("\(message)")
            display("⚠ \(message)")
        case .ready(let step):
            // No camera: the rig holds still here until it moves on.
            if timing == nil, logsHolds { holdingSince = (step, time, UTCTime.iso(Date().timeIntervalSince1970)) }
        case .moveStarted, .homeMoveStarted, .programEnded:
            closeHold(at: time)
            if case .programEnded(let stopped) = playerEvent {
                ended = stopped
                programOver.store(true, ordering: .relaxed)
                groupTimer?.cancel()
                logInterruptedShot(at: time)
            }
        case .settled(let step, let seconds, let measured):
            settles[step] = (seconds, measured)
            if !measured {
                let message =
                    "step \(step + 1): not measured still within the settle timeout; fell back to the fixed settle (\(fixed(seconds, 2)) s after the move)"
                logger.warning("\(message)")
                display("⚠ \(message)")
            }
        case .finished, .readyAtHome, .readyToStart, .readyToRejoin:
            break
        }
    }

    /// Something a person should read after the run: logged, and written to the shot log.
    public func warn(_ message: String) {
        logger.warning("\(message)")
        write(.warning(ShotLogWarning(message: message)))
    }

    /// Writes the `end` event and closes the log (the camera is the session's: it closes
    /// it). `loopFault`: why the loop stopped, if it failed.
    public func finish(loopFault: String?, stoppedBySignal: Bool) {
        programOver.store(true, ordering: .relaxed)
        groupTimer?.cancel()
        // The last frame's download may still be under way (`rig serve` ends a run while
        // the camera stays open): its measures belong in this log. Generous: a large raw
        // file on a busy Pi takes seconds (10 s was once too short for a small JPEG on a
        // loaded 2-core machine); each camera call is bounded itself.
        (camera as? ImageReporting)?.waitForImages(within: 30)
        logFramesReported(all: true)
        writePendingImages(all: true)
        logInterruptedShot(at: nil)
        let ownFault = faultMessage
        let reason: ShotLogEnd.Reason
        if ownFault != nil || (loopFault != nil && !(stoppedBySignal && loopFault == "aborted")) {
            reason = .fault
        } else if ended == false {
            // The program ran to its end (after its last step's trigger).
            reason = .done
        } else {
            reason = .stopped
        }
        write(.end(ShotLogEnd(reason: reason, lastStep: lastStep.map { $0 + 1 }, message: reason == .fault ? (ownFault ?? loopFault) : nil)))
        do { try writer?.close() } catch {
            logger.error("closing the shot log failed: \(error)")
        }
    }

    /// A stop while the camera was taking a shot: the card holds a frame (perhaps cut
    /// short) that the log must count, so `export` numbers the files as the camera did.
    private func logInterruptedShot(at time: Double?) {
        if shotUnderWay == nil, let g = groupShot, groupShotAsked.load(ordering: .relaxed) || g.firesAtTime && WallClock.nanoseconds() >= g.atNs {
            // A group's frame the run stopped during: counted as a single rig's is.
            shotUnderWay = (g.step, 1, g.start, UTCTime.iso(Double(g.atNs) / 1e9))
        }
        groupShot = nil
        guard let shot = shotUnderWay else { return }
        shotUnderWay = nil
        if let failed = cameraFailed.withLock({ $0 }), failed.step == shot.step, failed.bracket == shot.bracket {
            // No frame to count (never confirmed, or lost with its copy): the step is shot again.
            write(
                .missed(
                    ShotLogMissed(
                        step: shot.step + 1, bracket: (timing?.shotsPerStep ?? 1) > 1 ? shot.bracket : nil, slotSeconds: nil, startSeconds: shot.start,
                        reason: failed.reason)))
            return
        }
        guard let planned = frame(shot.step) else { return }
        shotsInterrupted += 1
        write(
            .shot(
                ShotLogShot(
                    step: shot.step + 1, label: planned.label, axisNames: axisNames, pose: shotPose[shot.step] ?? planned.pose,
                    startSeconds: shot.start, endSeconds: max(time ?? shot.start, shot.start), redo: shotSteps.contains(shot.step),
                    bracket: (timing?.shotsPerStep ?? 1) > 1 ? shot.bracket : nil, interrupted: true, at: shot.at)))
        logger.warning(
            "the run stopped during the shot at step \(shot.step + 1): logged as interrupted (the camera may have saved a frame); --resume shoots the step again"
        )
    }

    /// A frame of a group (the group link fired it on its timer, or a follower reported
    /// it): `rig` names the follower, nil for this rig's own frame (which counts as its
    /// step's shot). Event thread.
    public func logFrame(step: Int, rig: String?, label: String?, axisNames: [String], pose: [Double], seconds: Double, edgeNs: Int64) {
        let own = rig == nil
        guard !own || steps.indices.contains(step) else { return }
        if own, groupShot?.step == step { groupShot = nil }
        let redo = own && shotSteps.contains(step)
        // This rig's camera's report of the frame (`fireInGroup`): its file, copy and settings.
        let report = own ? reports.withLock { $0.removeValue(forKey: ShotKey(step: step, bracket: 1)) } ?? .none : .none
        if own {
            shotSteps.insert(step)
            lastStep = step
            shotsTaken += 1
        }
        write(
            .shot(
                ShotLogShot(
                    step: step + 1, label: own ? steps[step].label : (label ?? "step \(step + 1)"), axisNames: own ? self.axisNames : axisNames,
                    pose: own ? steps[step].pose : pose, startSeconds: seconds, endSeconds: seconds, redo: redo, file: report.file,
                    downloaded: report.downloaded, settings: report.settings, at: UTCTime.iso(Double(edgeNs) / 1e9),
                    rampEV: own ? rampSettings[step]?.settings.ev100 : nil, rig: rig, edgeNs: edgeNs)))
        if let problem = report.downloadProblem {
            downloadsFailed += 1
            warn("step \(step + 1): \(problem)")
            display("⚠ step \(step + 1) NOT downloaded: \(problem)")
        }
    }

    private func closeHold(at time: Double) {
        guard let hold = holdingSince else { return }
        holdingSince = nil
        let redo = shotSteps.contains(hold.step)
        shotSteps.insert(hold.step)
        record(step: hold.step, start: hold.time, end: time, redo: redo, bracket: nil, report: .none, at: hold.at)
    }

    /// Logs the path's frames the camera has reported, oldest first (`all`: every one,
    /// reported or not: the run is over). Event thread.
    private func logFramesReported(all: Bool) {
        while let frame = framesAwaitingReports.first {
            if let failed = cameraFailed.withLock({ $0 }), failed.step == frame.step {
                // The camera failed it: no frame to count.
                framesAwaitingReports.removeFirst()
                write(.missed(ShotLogMissed(step: frame.step + 1, slotSeconds: nil, startSeconds: frame.start, reason: failed.reason)))
                continue
            }
            let key = ShotKey(step: frame.step, bracket: 1)
            guard let report = reports.withLock({ $0.removeValue(forKey: key) }) ?? (all || camera == nil ? ShotReport.none : nil) else { return }
            framesAwaitingReports.removeFirst()
            record(step: frame.step, start: frame.start, end: frame.end, redo: false, bracket: nil, report: report, at: frame.at)
        }
    }

    /// A frame's label and planned pose: its step's, or for a keyframes path's frame on the
    /// move "shot N" and the pose the rig was at when it fired (nil: no such frame).
    private func frame(_ step: Int) -> (label: String, pose: [Double])? {
        if steps.indices.contains(step) { return (steps[step].label, steps[step].pose) }
        guard steps.isEmpty, step >= 0 else { return nil }
        return ("shot \(step + 1)", shotPose[step] ?? [])
    }

    private func record(step: Int, start: Double, end: Double, redo: Bool, bracket: Int?, report: ShotReport, at: String?) {
        guard let planned = frame(step) else { return }
        lastStep = step
        shotsTaken += 1
        write(
            .shot(
                ShotLogShot(
                    step: step + 1, label: planned.label, axisNames: axisNames, pose: shotPose[step] ?? planned.pose,
                    startSeconds: start, endSeconds: max(end, start), redo: redo, bracket: bracket,
                    file: report.file, downloaded: report.downloaded, settings: report.settings, at: at,
                    rampEV: bracket == nil || bracket == 1 ? rampSettings[step]?.settings.ev100 : nil, settle: settles[step])))
        recordedShots.insert(ShotKey(step: step, bracket: bracket ?? 1))
        // The ramp's measure of this frame reads the settings the camera really made (its
        // nearest choice of the ramp's), when it says them all.
        if bracket == nil || bracket == 1, let wanted = rampSettings[step], let made = ExposureValue.made(report.settings) {
            rampSettings[step] = (made, wanted.seconds)
        }
        if let problem = report.downloadProblem {
            downloadsFailed += 1
            let frame = "step \(step + 1)" + (bracket.map { " bracket \($0)" } ?? "")
            warn("\(frame): \(problem)")
            display("⚠ \(frame) NOT downloaded: \(problem)")
        }
        writePendingImages()
    }

    /// A frame's request: the ramp's exposure on a step's first frame (the rig then holds
    /// the shutter for the ramp's time), and what to call it in messages. Event thread.
    private func request(step: Int, bracket: Int, at time: Double, timing base: ShotTiming) -> (request: ShotRequest, what: String) {
        var exposure: ExposureSettings?
        if ramp != nil, bracket == 1 {
            exposure = ramp?.settings(frame: step, seconds: time)
            if let exposure { rampSettings[step] = (exposure, time) }
        }
        let what =
            (steps.isEmpty ? "shot \(step + 1)" : "step \(step + 1)/\(steps.count)")
            + (base.shotsPerStep > 1 ? " bracket \(bracket)/\(base.shotsPerStep)" : "")
        return (Self.frameRequest(step: step, bracket: bracket, at: time, timing: base, exposure: exposure), what)
    }

    /// A frame's request with a ramp's exposure, if it has one: the rig then times the
    /// exposure, holding the shutter for the ramp's time. (The runner's frames and
    /// `rig serve`'s test shot.)
    public static func frameRequest(step: Int, bracket: Int, at time: Double, timing base: ShotTiming, exposure: ExposureSettings?) -> ShotRequest {
        var timing = base
        if let exposure {
            timing.shutterHoldSeconds = exposure.shutterSeconds
            timing.exposureWindowSeconds = exposure.shutterSeconds
        }
        return ShotRequest(timing: timing, step: step, bracket: bracket, exposure: exposure, runSeconds: time)
    }

    /// A camera's failure at a frame: logged, the run's fault, and the run stopped (not
    /// after the program is over, or when the camera was closed on purpose).
    private func cameraFailure(_ error: CameraError, camera: Camera, step: Int, bracket: Int, what: String) {
        if programOver.load(ordering: .relaxed) || camera.isClosed { return }
        let message = "camera (\(camera.label)) failed at \(what): \(error)"
        cameraFailed.withLock { $0 = (step, bracket, error.description) }
        fault.withLock { $0 = $0 ?? message }
        logger.error("\(message): stopping")
        requests.withLock { $0 }?.stop()
    }

    /// A group's frame of `step`, due at UTC nanosecond `atNs` on every rig: a camera
    /// that `firesAtTime` is asked now and closes its shutter then; any other is fired
    /// from a timer at that time. `fired` gets the edge (the camera's measured one, or
    /// the timer's) once the exposure is over — the rig holds still until then — or nil
    /// when the camera failed (the run then stops, as for any shot). False without a
    /// camera: the group's timer is the frame. Event thread.
    public func fireInGroup(step: Int, atNs: Int64, runSeconds: Double, fired: @escaping @Sendable (Int64?) -> Void) -> Bool {
        guard let camera, let timing else { return false }
        let made = request(step: step, bracket: 1, at: runSeconds, timing: timing)
        var request = made.request
        let what = made.what
        let key = ShotKey(step: step, bracket: 1)
        let exposureSeconds = request.timing.exposureWindowSeconds
        let reportsDone = camera.reportsShotDone
        if camera.firesAtTime { request.shutterAtNs = atNs }
        groupShot = (step, runSeconds, atNs, camera.firesAtTime)
        groupShotAsked.store(false, ordering: .relaxed)
        let shoot: @Sendable (Int64) -> Void = { [weak self, request] asked in
            if !camera.firesAtTime, let self {
                self.groupShotAsked.store(true, ordering: .relaxed)
                self.logger.info("step \(step + 1): the camera fired at the group's time")
            }
            camera.shoot(request) { [weak self] result in
                guard let self else { return fired(nil) }
                switch result {
                case .success(let report):
                    self.reports.withLock { $0[key] = report }
                    // A camera that does not say when its exposure is over: its planned time.
                    if !reportsDone { SystemThread.sleep(seconds: exposureSeconds) }
                    fired(report.edgeNs ?? asked)
                case .failure(let error):
                    self.cameraFailure(error, camera: camera, step: step, bracket: 1, what: what)
                    fired(nil)
                }
            }
        }
        display("📷 \(what) at the group's time")
        if camera.firesAtTime {
            shoot(atNs)
        } else {
            groupTimer = ShotTimer(atNs: atNs, action: shoot)
        }
        return true
    }

    /// A group's frame fired from a timer (a camera that does not fire at a time itself);
    /// cancelled when the run ends first.
    private var groupTimer: ShotTimer?

    private func fire(step: Int, bracket: Int, at time: Double) {
        guard let camera, let timing else { return }
        let (request, what) = request(step: step, bracket: bracket, at: time, timing: timing)
        display("📷 \(what)")
        let reportsDone = camera.reportsShotDone
        let key = ShotKey(step: step, bracket: bracket)
        camera.shoot(request) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let report):
                self.reports.withLock { $0[key] = report }
                if reportsDone { self.requests.withLock { $0 }?.shotDone() }
            case .failure(let error):
                // Over, or closed on purpose (the session's end): a shot cut short is no fault.
                self.cameraFailure(error, camera: camera, step: step, bracket: bracket, what: what)
            }
        }
    }

    private struct ShotKey: Hashable {
        var step: Int
        var bracket: Int
    }

    private func write(_ event: ShotLogEvent) {
        observer.withLock { $0 }?(event)
        guard let writer, logIncomplete == nil else { return }
        do { try writer.append(event) } catch {
            let message = "writing the shot log \(writer.path) failed: \(error); the log is INCOMPLETE from here (it keeps every event before, on whole lines)"
            logFailure.withLock { $0 = message }
            logger.error("\(message); the run goes on")
            display("⚠ shot log INCOMPLETE: \(error)")
        }
    }
}

/// In `rig play`, the program's shots are a part of the session: they reach the loop
/// through its door, and their log ends with the run's outcome. (`rig serve` makes one
/// runner per program and finishes it when the program ends.)
extension ShotRunner: SessionPart {
    public var partName: String { "shots" }

    public func start(_ door: SessionDoor) throws(PartStartFailure) {
        attach(Requests(shotDone: { [mailbox = door.mailbox] in mailbox.post(.shotDone) }, stop: door.stop, pose: door.pose))
    }

    public func finish(_ outcome: SessionOutcome) {
        for warning in outcome.warnings { warn(warning) }
        finish(loopFault: outcome.failure, stoppedBySignal: outcome.stoppedBySignal)
    }
}

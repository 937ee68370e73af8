import FoundationEssentials
import Glibc
import RigCore
import RigRuntime

/// `RigConsole`'s camera side: a program's exposure matched to the camera, each program's
/// shot runner and log, and the last shot the status shows.
extension RigConsole {
    /// The frames `program` asks of a camera the rig sets (its exposure, its steps' and its
    /// bracket), matched to the camera's own choices as `rig play` matches them: 422 naming
    /// the step and the choices, 503 if the camera does not answer; nil for a camera that
    /// is not set (the library refused a program asking that of one). Changes nothing.
    public func exposurePlan(for program: Program) throws(ServeError) -> ExposurePlan? {
        guard let settable = camera as? SettableCamera else { return nil }
        switch settable.plan(for: program) {
        case .success(let plan): return plan
        case .failure(.camera(let error)): throw ServeError(.serviceUnavailable, "\(program.file): camera: \(error)")
        case .failure(.mismatch(let problem)):
            throw ServeError(.unprocessableContent, "\(program.file): refusing to play (nothing moved): \(problem)")
        }
    }

    /// The camera as the status shows it: connected, or not yet (a `LateCamera` still
    /// looking for it); nil without one.
    var cameraState: ServeStatus.CameraState? {
        guard let camera else { return nil }
        if let late = camera as? LateCamera, late.presence == .missing {
            return ServeStatus.CameraState(
                state: LateCamera.Presence.missing.rawValue, label: rig.camera?.type ?? "camera", problem: late.problem, liveView: nil)
        }
        return ServeStatus.CameraState(state: LateCamera.Presence.connected.rawValue, label: camera.label, problem: nil, liveView: liveViewStatus)
    }

    /// Refuses (503) a program that shoots while the camera is not connected: its first
    /// shot would fail and stop it.
    public func requireCamera(for program: HostedProgram) throws(ServeError) {
        guard program.shooting.timing != nil, let late = camera as? LateCamera, late.presence == .missing else { return }
        throw ServeError(
            .serviceUnavailable,
            "\(program.name): the camera is not connected (\(late.problem ?? "not found")); turn it on or plug it in: rig serve looks for it every few seconds (nothing moved)"
        )
    }

    /// The choices of a camera the rig sets, for the program list's verdicts; nil without
    /// one, while it is not connected, or while a program plays (no round trip to a camera
    /// that is shooting).
    public func cameraChoicesAtRest() -> CameraChoices? {
        guard let settable = camera as? SettableCamera, !isPlaying else { return nil }
        if let late = camera as? LateCamera, late.presence == .missing { return nil }
        return try? settable.choices()
    }

    /// The shots of one program: fired with the server's camera (which outlives it), logged
    /// as `rig play` logs them, the last one kept for the status.
    func makeRunner(_ program: HostedProgram, camera: Camera, sha: String) -> ShotRunner {
        rampNudge.set(0)
        let steps: [Step] = if case .stepped(let s) = program.motion { s } else { [] }
        var writer: ShotLogWriter?
        if let path = shotLogs?.newLogPath(program: program.name) {
            do { writer = try ShotLogWriter(path: path) } catch {
                logger.error("cannot write the shot log \(path): \(error); the program shoots without one")
            }
        }
        let names = rig.axes.map(\.name)
        let start = ShotLogStart(
            program: program.name, programSha256: sha, steps: steps.count, startedAt: RunLogDirectory.isoStamp(Date()),
            fromStep: program.firstStep > 0 ? program.firstStep + 1 : nil, startAxisNames: names, startPose: pose, rigPointing: rig.pointing)
        let shots = ShotRunner(
            steps: steps, axisNames: names, camera: camera, timing: program.shooting.timing, writer: writer, start: start, ramp: program.ramp,
            rampNudge: rampNudge, logger: logger, display: { [logger] line in logger.info("\(line)") })
        let mailbox = self.mailbox
        shots.attach(
            ShotRunner.Requests(
                shotDone: { [mailbox] in mailbox.post(.shotDone) },
                stop: { mailbox.post(.stop) }, pose: { [weak self] in self?.loopStatus?.positions }))
        shots.observe { [weak self] event in self?.record(event, program: program.name) }
        return shots
    }

    /// Keeps the last shot for the status (a frame's `image` comes after its `shot`).
    func record(_ event: ShotLogEvent, program: String) {
        defer { changed() }
        shared.withLock { s in
            switch event {
            case .shot(let shot) where !shot.interrupted:
                s.lastShot = ServeStatus.LastShot(
                    program: program, step: shot.step, bracket: shot.bracket, file: shot.file,
                    settings: Dictionary(shot.settings.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a }),
                    brightnessEV: nil, clippedHigh: nil, clippedLow: nil, preview: false, histogram: nil, missed: nil,
                    battery: (camera as? BatteryReporting)?.lastBattery)
                s.lastPreview = nil
            case .image(let image):
                guard var last = s.lastShot, last.program == program, last.step == image.step, last.bracket == image.bracket else { return }
                last.brightnessEV = (image.brightnessEV * 100).rounded() / 100
                last.clippedHigh = (image.clippedHigh * 1000).rounded() / 1000
                last.clippedLow = (image.clippedLow * 1000).rounded() / 1000
                last.preview = image.preview != nil
                last.histogram = image.histogram
                s.lastPreview = image.preview
                s.lastShot = last
            case .missed(let missed) where missed.reason != nil:
                s.lastShot = ServeStatus.LastShot(
                    program: program, step: missed.step, bracket: nil, file: nil, settings: [:], brightnessEV: nil, clippedHigh: nil,
                    clippedLow: nil, preview: false, histogram: nil, missed: missed.reason, battery: (camera as? BatteryReporting)?.lastBattery)
                s.lastPreview = nil
            default:
                break
            }
        }
    }

    /// The last frame's preview (a small JPEG), if it has one.
    public var lastShotPreview: String? { shared.withLock { $0.lastPreview } }
}

extension RigConsole {
    /// Sets the nudge (`ev`) or adds to it (`by`) on the playing program's exposure ramp;
    /// returns the nudge now (held to ±3 EV). 409 without a ramp playing.
    func nudge(set ev: Double?, by delta: Double?) throws(ServeError) -> Double {
        try requireRampPlaying()
        if let ev { return rampNudge.set(ev) }
        return rampNudge.add(delta ?? 0)
    }

    /// 409 unless a program with an exposure ramp is playing.
    func requireRampPlaying() throws(ServeError) {
        guard runner.withLock({ $0?.rampNudge != nil }) else {
            throw ServeError(.conflict, "no program with an exposure ramp is playing; a nudge moves a ramp's exposure")
        }
    }
}

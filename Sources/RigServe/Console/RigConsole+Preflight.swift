import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import RigSky
import Synchronization

/// What a program will need against what the rig and its camera have, before it plays
/// (`GET /api/preflight`): its frames and time, the camera's card (the frames the camera
/// says still fit), the disk its frames are copied to, and the battery. Each finding is
/// `ok` or a `warning` a photographer can act on; nothing here refuses a play.
public struct Preflight: Sendable, Equatable, Encodable {
    public struct Finding: Sendable, Equatable, Encodable {
        public enum Level: String, Sendable, Encodable { case ok, warning }
        public var level: Level
        /// What it is about: `time`, `camera`, `card`, `disk`, `battery`.
        public var topic: String
        public var text: String
    }

    public var program: String
    /// Frames the program takes (brackets and shots per step included); 0 without a camera.
    public var frames: Int
    /// How long it takes, when it is paced (auto or an interval); nil when a person
    /// advances each step.
    public var seconds: Double?
    /// When it ends if started now (or at its `start`), UTC ISO 8601; the page shows it
    /// on the phone's clock.
    public var endsAt: String?
    public var camera: String?
    public var battery: String?
    public var storage: [CameraStorage]?
    public var downloadFolder: String?
    public var downloadFreeKiB: Int?
    public var findings: [Finding]

    private enum Keys: String, CodingKey {
        case program, frames, seconds, endsAt, camera, battery, storage, downloadFolder, downloadFreeKiB, findings
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(program, forKey: .program)
        try c.encode(frames, forKey: .frames)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(endsAt, forKey: .endsAt)
        try c.encode(camera, forKey: .camera)
        try c.encode(battery, forKey: .battery)
        try c.encode(storage, forKey: .storage)
        try c.encode(downloadFolder, forKey: .downloadFolder)
        try c.encode(downloadFreeKiB, forKey: .downloadFreeKiB)
        try c.encode(findings, forKey: .findings)
    }

    /// What the camera and this machine said, for `make`.
    public struct Camera: Sendable, Equatable {
        public var label: String
        /// Why it is not there (a camera not connected).
        public var problem: String?
        public var battery: String?
        /// nil: it does not report its storage; `storageProblem`: it failed to.
        public var storage: [CameraStorage]?
        public var storageProblem: String?
        public var keepsFramesOnCard = true
        public var downloadFolder: String?
        public var downloadFreeBytes: UInt64?

        public init(label: String) { self.label = label }
    }

    /// The findings from the facts (a pure function: the tests give it every case).
    /// - Parameter unshot: why a program takes no frames although the rig has a camera
    ///   (nil: the rig has none).
    public static func make(program: String, frames: Int, seconds: Double?, start: Double, camera: Camera?, unshot: String? = nil) -> Preflight {
        var findings: [Finding] = []
        func ok(_ topic: String, _ text: String) { findings.append(Finding(level: .ok, topic: topic, text: text)) }
        func warn(_ topic: String, _ text: String) { findings.append(Finding(level: .warning, topic: topic, text: text)) }
        if let seconds {
            ok("time", "takes about \(StartClock.duration(seconds))")
        } else {
            ok("time", "each step waits for you to advance it, so it takes as long as you take")
        }
        var preflight = Preflight(
            program: program, frames: frames, seconds: seconds.map { ($0 * 10).rounded() / 10 },
            endsAt: seconds.map { UTCTime.isoSeconds(start + $0) }, camera: camera?.label, battery: camera?.battery,
            storage: camera?.storage, downloadFolder: camera?.downloadFolder,
            downloadFreeKiB: camera?.downloadFreeBytes.map { Int(clamping: $0 / 1024) }, findings: [])
        guard let camera, frames > 0 else {
            ok("camera", unshot ?? (frames == 0 ? "no camera: the rig moves and holds at each step, nothing is shot" : "no camera"))
            preflight.findings = findings
            return preflight
        }
        if let problem = camera.problem {
            warn("camera", "\(camera.label) is not connected (\(problem)): turn it on or plug it in")
        }
        // The card: the frames the camera says still fit (its own guess at its quality).
        let cards = camera.storage ?? []
        let fit = cards.compactMap(\.freeImages).max()
        let perFrameKiB: Int? = cards.compactMap { card -> Int? in
            guard let free = card.freeKiB, let images = card.freeImages, images > 0 else { return nil }
            return free / images
        }.max()
        if let problem = camera.storageProblem {
            warn("card", "the camera did not say what its card holds (\(problem))")
        } else if !camera.keepsFramesOnCard {
            ok("card", "frames are kept in the camera's memory until they are copied, not on its card")
        } else if let fit {
            if fit < frames {
                warn("card", "the card holds about \(fit) more frames; this shoot takes \(frames): free some space or use a larger card")
            } else {
                ok("card", "the card holds about \(fit) more frames; this shoot takes \(frames)")
            }
        } else if let free = cards.compactMap(\.freeKiB).max() {
            ok("card", "\(size(kib: free)) free on the card (the camera does not say how many frames fit)")
        } else if camera.storage != nil {
            warn("card", cards.isEmpty ? "the camera reports no card: is one in?" : "the camera does not say what its card holds")
        }
        // This machine's disk, where each frame is copied.
        if let folder = camera.downloadFolder, let free = camera.downloadFreeBytes {
            let freeKiB = Int(clamping: free / 1024)
            if let perFrameKiB, perFrameKiB > 0 {
                let need = perFrameKiB * frames
                if need > freeKiB {
                    warn("disk", "\(folder) has \(size(kib: freeKiB)) free; the frames need about \(size(kib: need)): free some space or copy elsewhere")
                } else {
                    ok("disk", "\(folder) has \(size(kib: freeKiB)) free; the frames need about \(size(kib: need))")
                }
            } else {
                ok("disk", "\(folder) has \(size(kib: freeKiB)) free")
            }
        }
        if let battery = camera.battery {
            if BatteryLevel.isLow(battery) {
                warn("battery", "the camera's battery is at \(battery): charge it, or power the camera from a dummy battery")
            } else {
                ok("battery", "the camera's battery is at \(battery)")
            }
        }
        preflight.findings = findings
        return preflight
    }

    static func size(kib: Int) -> String { decimalSize(bytes: Double(kib) * 1024) }
}

extension RigConsole {
    /// The preflight of a checked program: the camera's card, battery and download disk
    /// read now (round trips, bounded: at rest only, never while a program shoots).
    public func preflight(_ checked: ProgramLibrary.Checked, file: String) throws(ServeError) -> Preflight {
        guard !isPlaying else { throw ServeError(.conflict, "a program is playing; the preflight reads the camera, which is shooting") }
        let shoots = checked.consoleProgram.shooting.timing != nil
        let frames = shoots && camera != nil ? checked.program.frameCount : 0
        var facts: Preflight.Camera?
        if let camera, shoots {
            var c = Preflight.Camera(label: camera.label)
            if let late = camera as? LateCamera, late.presence == .missing {
                c.problem = late.problem ?? "not found"
            } else {
                c.battery = (camera as? BatteryReporting)?.battery()
                if let reporting = camera as? StorageReporting {
                    do throws(CameraError) { c.storage = try reporting.storage() } catch { c.storageProblem = error.description }
                }
            }
            if let reporting = camera as? StorageReporting {
                c.keepsFramesOnCard = reporting.keepsFramesOnCard
                c.downloadFolder = reporting.downloadFolder
                c.downloadFreeBytes = reporting.downloadFolder.flatMap { OutputPath.freeBytes(near: $0) }
            }
            facts = c
        }
        let start = checked.program.start.map { max($0.unix, wallClock()) } ?? wallClock()
        let unshot = camera != nil && !shoots ? "the rig's camera takes no frames in this program (it shoots nothing, or the phone's app does)" : nil
        return Preflight.make(
            program: file, frames: frames, seconds: ProgramLibrary.estimatedSeconds(checked), start: start, camera: facts, unshot: unshot)
    }

    /// One frame at the program's first settings (its exposure, the ramp's first frame;
    /// the first of a bracket), taken now and shown as the last shot (`test: true`), in no
    /// shot log. At rest only; the camera's file is copied like any frame. Blocks until the
    /// camera has it (bounded).
    public func testShot(_ checked: ProgramLibrary.Checked, file: String, exposure: ExposurePlan?) throws(ServeError) -> ServeStatus.LastShot {
        guard let camera else { throw ServeError(.conflict, "the rig has no camera") }
        guard let timing = checked.consoleProgram.shooting.timing else {
            throw ServeError(.conflict, "\(file) shoots nothing (no camera shots in it): there is nothing to test")
        }
        try requireCamera(for: checked.consoleProgram)
        let claimed = shared.withLock { s -> Bool in
            guard s.run == nil, !s.testShotUnderWay else { return false }
            s.testShotUnderWay = true
            return true
        }
        guard claimed else { throw ServeError(.conflict, "a program is playing, or a test shot is under way") }
        defer {
            shared.withLock { $0.testShotUnderWay = false }
            changed()
        }
        if let exposure { (camera as? SettableCamera)?.prepare(exposure) }
        let label = "test shot (\(file))"
        var first: ExposureSettings?
        if let ramp = checked.consoleProgram.ramp {
            var runner = ExposureRampRunner(ramp)
            first = runner.settings(frame: 0, seconds: 0)
        }
        let request = ShotRunner.frameRequest(step: 0, bracket: 1, at: 0, timing: timing, exposure: first)
        // The last shot is the test's from now: its measure may come before the shot's end.
        shared.withLock { s in
            s.lastShot = ServeStatus.LastShot(
                program: label, step: 1, bracket: timing.shotsPerStep > 1 ? 1 : nil, file: nil, settings: [:], brightnessEV: nil,
                clippedHigh: nil, clippedLow: nil, preview: false, histogram: nil, missed: nil, battery: nil, test: true)
            s.lastPreview = nil
        }
        (camera as? ImageReporting)?.onImage { [weak self] image in self?.record(.image(image), program: label) }
        let outcome = Mutex<Result<ShotReport, CameraError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        camera.shoot(request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        let limit = request.timing.shotSeconds + 60
        guard done.wait(timeout: .now() + limit) == .success, let result = outcome.withLock({ $0 }) else {
            throw ServeError(.serviceUnavailable, "the camera did not finish the test shot within \(Int(limit)) s")
        }
        let report: ShotReport
        switch result {
        case .success(let r): report = r
        case .failure(let error):
            shared.withLock { $0.lastShot?.missed = error.description }
            throw ServeError(error.refused ? .unprocessableContent : .serviceUnavailable, "test shot: \(error)")
        }
        shared.withLock { s in
            s.lastShot?.file = report.file
            s.lastShot?.settings = Dictionary(report.settings.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
            s.lastShot?.battery = (camera as? BatteryReporting)?.lastBattery
        }
        changed()
        // Its measure and preview, once the camera has copied it (bounded).
        (camera as? ImageReporting)?.waitForImages(within: 30)
        logger.info("\(label): \(report.file ?? "taken")")
        guard let shot = shared.withLock({ $0.lastShot }), shot.program == label else {
            throw ServeError(.conflict, "the test shot was taken, but another shot followed it")
        }
        return shot
    }
}

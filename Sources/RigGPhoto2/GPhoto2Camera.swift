import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigRuntime
import RigSky
import Synchronization
import SystemPackage

/// A camera the rig controls through libgphoto2 (`"camera": {"type": "gphoto2"}`): it
/// writes each frame's settings, triggers the capture and reports the shot done only when
/// the camera reports the new file. A shot not confirmed in time is tried once more, then
/// fails (the run stops: brake, park, `missed` in the log). Every call runs on the
/// camera's own thread (`GPhoto2Worker`), never on the loop's, and is bounded in time.
public final class GPhoto2Camera: SettableCamera, ImageReporting, BatteryReporting, StorageReporting, LiveViewSource, FocusPointSource, Sendable {
    public let config: GPhoto2CameraConfig
    public let model: String
    public let port: String
    private let worker: GPhoto2Worker
    private let logger: Logger
    /// `capture_preview` on the worker while someone watches; paused for each shot.
    private let live: GPhoto2LiveView
    private let plan = Mutex(ExposurePlan())
    /// The settings written last, by name: a frame writes only what changes.
    private let applied = Mutex<[String: String]>([:])
    private let closed = Atomic<Bool>(false)
    /// The download names taken, lowercased: this run's, and those a resumed log already
    /// uses (``reserveNames(_:)``), so a frame of a new camera session that the camera names
    /// as an earlier one (its numbering restarted) never takes that one's name.
    private let takenNames = Mutex<Set<String>>([])
    /// How long a frame's copy may take (a large raw file over PTP/IP) before the camera
    /// counts as hung.
    static let downloadSeconds = 120.0
    private let imageHandler = Mutex<(@Sendable (ShotLogImage) -> Void)?>(nil)
    /// The battery as last read, and when (read again after a shot at most once a minute).
    private let batteryReading = Mutex<(level: String?, at: ContinuousClock.Instant?)>((nil, nil))

    /// The camera's names for each exposure setting, in the order brands use them.
    public static let settingNames = ExposureValue.settingNames

    /// Opens the camera (bounded: `seconds`), and sets its capture target if the config asks.
    public static func open(_ config: GPhoto2CameraConfig, within seconds: Double = 30, logger: Logger) throws(CameraError) -> GPhoto2Camera {
        let opened = Mutex<Result<GPhoto2Device, CameraError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Opening blocks in libgphoto2 (USB enumeration, PTP session): off this thread, bounded.
        SystemThread.start(name: "rig-camera-open") {
            let result: Result<GPhoto2Device, CameraError>
            do throws(GPhoto2Error) {
                result = .success(try GPhoto2Device(model: config.model, port: config.port))
            } catch {
                result = .failure(CameraError(error.description))
            }
            opened.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success, let result = opened.withLock({ $0 }) else {
            throw CameraError("\(config.label): the camera did not answer within \(Int(seconds)) s (asleep, or held by another program?)")
        }
        let device = try result.get()
        let camera = GPhoto2Camera(config: config, device: device, logger: logger)
        if let target = config.captureTarget {
            let found = try camera.widget("capturetarget")
            let word = target == .card ? "card" : "ram"
            guard let choice = found.choices.first(where: { $0.lowercased().contains(word) }) else {
                camera.close()
                throw CameraError("the camera's capture targets are \(quotedList(found.choices)); none is the \(target.rawValue)")
            }
            try camera.set("capturetarget", choice)
        }
        camera.findFocusPoint()
        return camera
    }

    private init(config: GPhoto2CameraConfig, device: GPhoto2Device, logger: Logger) {
        self.config = config
        model = device.model
        port = device.port
        worker = GPhoto2Worker(device)
        self.logger = logger
        live = GPhoto2LiveView(worker: worker, logger: logger)
    }

    public var liveView: LiveViewFeed { live.feed }

    /// One live-view frame (`rig camera preview`): the camera's JPEG, the viewfinder
    /// released after; "this camera has no live view" from one that has none.
    public func previewFrame(within seconds: Double = 15) throws(CameraError) -> LiveViewFrame {
        try live.oneFrame(within: seconds)
    }

    public var label: String { "gphoto2 \(model) on \(port)" }
    public var reportsShotDone: Bool { true }

    // MARK: Settings

    /// Every setting the camera offers.
    public func widgets() throws(CameraError) -> [GPhoto2Widget] {
        try worker.run(within: 30, "reading the camera's settings") { device throws(GPhoto2Error) in try device.widgets() }.get()
    }

    public func widget(_ name: String) throws(CameraError) -> GPhoto2Widget {
        try worker.run(within: 15, "reading \"\(name)\"") { device throws(GPhoto2Error) in try device.widget(name) }.get()
    }

    /// Writes a setting; a radio or menu setting takes only one of its own choices (the
    /// error lists them), a read-only one nothing.
    public func set(_ name: String, _ value: String) throws(CameraError) {
        let current: GPhoto2Widget
        do { current = try widget(name) } catch { throw CameraError(error.description, refused: true) }
        if current.readOnly { throw CameraError("\"\(name)\" is read-only on this camera (it is \"\(current.value ?? "?")\")", refused: true) }
        if current.type == "radio" || current.type == "menu", !current.choices.contains(value) {
            throw CameraError("\"\(elided(value))\" is not one of \(name)'s choices: \(quotedList(current.choices, limit: 80))", refused: true)
        }
        try worker.run(within: 15, "setting \"\(name)\"") { device throws(GPhoto2Error) in try device.set(name, value) }.get()
        applied.withLock { $0[name] = value }
    }

    /// The exposure settings this camera offers, under the names it uses.
    public func choices() throws(CameraError) -> CameraChoices {
        var out = CameraChoices()
        let all = try widgets()
        for (setting, names) in Self.settingNames {
            if let widget = names.lazy.compactMap({ name in all.first { $0.name == name && !$0.readOnly } }).first {
                out.widgets[setting] = CameraChoices.Widget(name: widget.name, current: widget.value ?? "", choices: widget.choices)
            }
        }
        // Bulb through libgphoto2: a Bulb shutter speed, and a control that opens and closes
        // the shutter (a toggle "bulb" on Nikon and Sony, "eosremoterelease" on Canon).
        if let bulbChoice = out.widgets[.shutter]?.choices.first(where: { $0.lowercased() == "bulb" }),
            let control = all.first(where: { ($0.name == "bulb" && $0.type == "toggle") || $0.name == "eosremoterelease" })
        {
            out.bulb = CameraChoices.BulbControl(widget: control.name, shutterChoice: bulbChoice)
        }
        return out
    }

    /// The camera's choices, read once and kept (they do not change during a run).
    private func keptChoices() -> CameraChoices {
        if let cached = cachedChoices.withLock({ $0 }) { return cached }
        guard let read = try? self.choices() else { return CameraChoices() }
        cachedChoices.withLock { $0 = read }
        return read
    }

    /// The settings of each frame of the run to come (resolved by `ExposurePlan.make`).
    public func prepare(_ exposure: ExposurePlan) {
        plan.withLock { $0 = exposure }
    }

    /// Called (on the camera's thread) with each downloaded frame's measures.
    public func onImage(_ handler: @escaping @Sendable (ShotLogImage) -> Void) {
        imageHandler.withLock { $0 = handler }
    }

    /// A frame's download runs on the worker after its shot: waits for the work queued so far
    /// (not behind a call that hung: nothing more will come).
    public func waitForImages(within seconds: Double) {
        guard worker.stuck == nil else { return }
        worker.drain(within: seconds)
    }

    /// The camera's choices, read once for ramps.
    private let cachedChoices = Mutex<CameraChoices?>(nil)

    /// A ramp's exposure as the camera's own nearest choices: shutter, ISO and the ramp's
    /// aperture. The choices are kept once read; a read that failed is tried again at the
    /// next frame (a night-long ramp must not stay on "no choices" for good).
    private func rampSettings(_ exposure: ExposureSettings, bulb: Bool) -> [CameraSetting] {
        let choices = keptChoices()
        if bulb, let control = choices.bulb, let shutter = choices.widgets[.shutter] {
            // The rig times the frame: the shutter on Bulb, the rest matched.
            let others = rampSettings(exposure, bulb: false).filter { $0.name != shutter.name }
            return [CameraSetting(shutter.name, control.shutterChoice)] + others
        }
        let wanted: [(CameraChoices.Setting, Double, (String) -> Double?)] = [
            (.shutter, exposure.shutterSeconds, ShutterSpeed.seconds), (.iso, exposure.iso, { Double($0) }),
            (.aperture, exposure.aperture, Aperture.number),
        ]
        return wanted.compactMap { setting, value, parse in
            choices.widgets[setting].flatMap { widget in
                ExposureMatch.nearest(value, in: widget.choices, parse: parse).map { CameraSetting(widget.name, $0) }
            }
        }
    }

    /// The battery as the camera reports it ("50%"), if it does.
    public func battery() -> String? {
        guard let widget = try? widget("batterylevel") else { return nil }
        batteryReading.withLock { $0 = (widget.value, ContinuousClock.now) }
        return widget.value
    }

    public var lastBattery: String? { batteryReading.withLock { $0.level } }

    public var downloadFolder: String? { config.download }
    public var keepsFramesOnCard: Bool { config.captureTarget != .ram }

    /// The camera's cards, as it reports them (bounded, on the camera's thread).
    public func storage() throws(CameraError) -> [CameraStorage] {
        try worker.run(within: 15, "reading the camera's storage") { device throws(GPhoto2Error) in try device.storage() }.get()
    }

    /// On the camera's thread, after a shot: the battery again if the last reading is a
    /// minute old.
    private func refreshBattery(_ device: GPhoto2Device) {
        guard batteryReading.withLock({ $0.at.map { $0.duration(to: ContinuousClock.now) > .seconds(60) } ?? true }) else { return }
        let level = try? device.widget("batterylevel").value
        batteryReading.withLock { $0 = (level, ContinuousClock.now) }
    }

    // MARK: Shots

    public func shoot(_ request: ShotRequest, done: @escaping @Sendable (Result<ShotReport, CameraError>) -> Void) {
        guard !closed.load(ordering: .relaxed) else { return done(.failure(CameraError("the camera is closed"))) }
        // A ramp's frame: the camera's nearest shutter speed (and ISO, if it offers ISO).
        // Bulb: the rig holds the shutter open for the frame's time (the program's
        // exposureSeconds, or the ramp's), through the camera's bulb control.
        let bulb = request.timing.bulb ? keptChoices().bulb.map { (control: $0, seconds: request.timing.shutterHoldSeconds) } : nil
        let settings =
            request.exposure.map { rampSettings($0, bulb: bulb != nil) } ?? plan.withLock { $0.settings(step: request.step, bracket: request.bracket) }
        let shutter = settings.first { Self.settingNames[.shutter]?.contains($0.name) == true }.flatMap { ShutterSpeed.seconds($0.value) }
        let exposure = max(shutter ?? 0, request.timing.exposureWindowSeconds, bulb?.seconds ?? 0)
        let attemptSeconds = exposure + config.confirmSeconds
        // Both tries, the settings and a margin: past this, a libgphoto2 call has hung.
        let watchdog = 2 * attemptSeconds + 15
        let shotWatch = ShotWatch(seconds: watchdog)
        // The live view waits for the shot, and goes on once it is confirmed (or failed).
        live.pauseForShot()
        let finish: @Sendable (Result<ShotReport, CameraError>) -> Void = { [live] result in
            if shotWatch.report() {
                live.resumeAfterShot()
                done(result)
            }
        }
        shotWatch.start { [worker] in
            finish(.failure(worker.markStuck("the camera has not answered in \(Int(watchdog)) s")))
        }
        if let stuck = worker.stuck { return finish(.failure(CameraError(stuck))) }
        let bracket = request.timing.shotsPerStep > 1 ? request.bracket : nil
        worker.enqueue("a shot") { [self] device in
            do throws(CameraError) {
                let file = try take(device, settings: settings, attemptSeconds: attemptSeconds, bulb: bulb)
                var report = ShotReport(file: file.description, settings: settings)
                var copied: (path: String, data: Data)?
                if let folder = config.download {
                    // Copied before the shot is reported: a `shot` event names only a copy that was made.
                    shotWatch.extend(by: Self.downloadSeconds)
                    switch copy(device, file, into: folder) {
                    case .success(let made):
                        copied = made
                        report.downloaded = made.path
                    case .failure(let problem):
                        // In the camera's memory only: the frame is gone, and the run must stop.
                        if config.captureTarget == .ram {
                            throw CameraError("\(problem); with \"captureTarget\": \"ram\" the frame was only in the camera's memory: it is lost")
                        }
                        report.downloadProblem = "\(problem); the frame is safe on the camera's card as \(file)"
                    }
                }
                finish(.success(report))
                refreshBattery(device)
                if let copied { measure(device, file, copied.data, savedAt: copied.path, step: request.step + 1, bracket: bracket) }
            } catch {
                finish(.failure(error))
            }
        } closed: {
            finish(.failure(CameraError("the camera is closed")))
        }
    }

    /// Writes the frame's settings, triggers, and waits for the camera's file; once more if
    /// the first try fails or is not confirmed in `attemptSeconds`.
    private func take(
        _ device: GPhoto2Device, settings: [CameraSetting], attemptSeconds: Double, bulb: (control: CameraChoices.BulbControl, seconds: Double)? = nil
    ) throws(CameraError) -> GPhoto2FilePath {
        do throws(GPhoto2Error) {
            for setting in settings where applied.withLock({ $0[setting.name] }) != setting.value {
                try device.set(setting.name, setting.value)
                applied.withLock { $0[setting.name] = setting.value }
            }
        } catch {
            throw CameraError(error.description)
        }
        drain(device)
        var problems: [String] = []
        for attempt in 1...2 where !closed.load(ordering: .relaxed) {
            if attempt > 1 { logger.warning("\(label): \(problems.last ?? "no file"); trying the shot once more") }
            // Monotonic: a Pi without a real-time clock jumps its wall clock when it syncs.
            let deadline = ContinuousClock.now + .milliseconds(Int64((attemptSeconds * 1000).rounded()))
            do throws(GPhoto2Error) {
                if let bulb { try holdBulb(device, bulb.control, seconds: bulb.seconds) } else { try trigger(device, until: deadline) }
                var said: String?
                if let file = try awaitFile(device, until: deadline, said: &said) { return file }
                problems.append(said.map { "no new file: the camera reported \($0)" } ?? "no new file \(Int(attemptSeconds.rounded())) s after the shutter")
            } catch {
                problems.append(error.description)
            }
        }
        let unique = problems.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        throw CameraError("the camera did not confirm the shot, tried twice: \(unique.joined(separator: "; then "))")
    }

    /// Opens the shutter with the bulb control, holds it `seconds` (on the monotonic clock;
    /// cut short when the camera is closed) and closes it, whatever happened meanwhile.
    private func holdBulb(_ device: GPhoto2Device, _ control: CameraChoices.BulbControl, seconds: Double) throws(GPhoto2Error) {
        try device.set(control.widget, control.press)
        let end = ContinuousClock.now + .milliseconds(Int64((seconds * 1000).rounded()))
        while !closed.load(ordering: .relaxed) {
            let left = ContinuousClock.now.duration(to: end).components
            let seconds = Double(left.seconds) + Double(left.attoseconds) * 1e-18
            guard seconds > 0 else { break }
            SystemThread.sleep(seconds: min(0.05, seconds))
        }
        try device.set(control.widget, control.release)
    }

    /// Triggers, retrying while the camera says it is busy.
    private func trigger(_ device: GPhoto2Device, until deadline: ContinuousClock.Instant) throws(GPhoto2Error) {
        while true {
            do throws(GPhoto2Error) {
                try device.triggerCapture()
                return
            } catch  where error.isBusy && ContinuousClock.now < deadline {
                SystemThread.sleep(seconds: 0.1)  // the camera asked to be asked again later
            }
        }
    }

    /// Waits for the new file; the capture-complete event (or a quiet moment) after it ends
    /// the wait, so a RAW+JPEG pair's second file is not taken for the next frame's.
    private func awaitFile(_ device: GPhoto2Device, until deadline: ContinuousClock.Instant, said: inout String?) throws(GPhoto2Error) -> GPhoto2FilePath? {
        var file: GPhoto2FilePath?
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline).components
            let left = Double(remaining.seconds) + Double(remaining.attoseconds) * 1e-18
            if left <= 0 || closed.load(ordering: .relaxed) { return file }
            let event = try device.waitForEvent(milliseconds: file == nil ? Int(min(left, 1) * 1000) + 1 : 200)
            switch event {
            case .fileAdded(let path):
                if file == nil { file = path } else { logger.info("\(label): the camera also wrote \(path)") }
            case .captureComplete, .timeout:
                if file != nil { return file }
            case .other:
                // The camera said why no file will come: no need to wait out the deadline.
                if let problem = event.shotProblem, file == nil {
                    said = problem
                    return nil
                }
            }
        }
    }

    /// Drops events left from before (property changes, a late second file).
    private func drain(_ device: GPhoto2Device) {
        for _ in 0..<50 {
            guard let event = try? device.waitForEvent(milliseconds: 1), event != .timeout else { return }
            if case .fileAdded(let path) = event { logger.info("\(label): a file the rig did not ask for: \(path)") }
        }
    }

    /// Names that a resumed run's log already uses (its downloads, and the camera's names
    /// of frames that were never copied): no new download takes one of them.
    public func reserveNames(_ names: some Sequence<String>) {
        takenNames.withLock { taken in
            for name in names { taken.insert(Self.key(name)) }
        }
    }

    private static func key(_ path: String) -> String {
        (FilePath(path).lastComponent?.string ?? "").lowercased()
    }

    /// A path in `folder` for the camera's file `name` that no file there and no name of
    /// this run (or of the log it resumes) has: `NAME`, else `STEM-2.EXT`, `STEM-3.EXT`…
    private func downloadPath(folder: String, name: String) -> String {
        takenNames.withLock { taken in
            let path = OutputPath.unusedPath(for: name, in: folder) { taken.contains($0.lowercased()) }
            taken.insert(Self.key(path))
            // The camera's own name too: a frame safe only on the card is exported by it.
            taken.insert(name.lowercased())
            return path
        }
    }

    /// Copies the frame off the camera into `folder` (and, with a RAM target, deletes it
    /// there): the copy's path and bytes, or why it failed.
    private func copy(_ device: GPhoto2Device, _ file: GPhoto2FilePath, into folder: String) -> Result<(path: String, data: Data), DownloadFailure> {
        let path = downloadPath(folder: folder, name: file.name)
        do {
            let data = try device.download(file)
            try AtomicFile.write([UInt8](data), to: path, createDirectory: true)
            if config.captureTarget == .ram {
                do { try device.delete(file) } catch {
                    logger.warning("\(label): the copy \(path) is made; deleting \(file) from the camera's memory failed: \(error)")
                }
            }
            return .success((path, data))
        } catch {
            let message = "downloading \(file) to \(path) failed: \(error)"
            logger.error("\(label): \(message)")
            return .failure(DownloadFailure(description: message))
        }
    }

    private struct DownloadFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// Measures a copied frame (a raw file: the camera's own preview of it) and keeps a
    /// small preview beside it; after the shot was reported (the rig may move).
    private func measure(_ device: GPhoto2Device, _ file: GPhoto2FilePath, _ data: Data, savedAt path: String, step: Int, bracket: Int?) {
        // The file's own size only from the file: a raw file's preview is smaller than it.
        let own = ImageAnalysis.analyse(jpeg: data)
        let analysed = own ?? (try? device.download(file, type: .preview)).flatMap { ImageAnalysis.analyse(jpeg: $0) }
        guard let analysed, let measures = ShotLogImage.measures(histogram: analysed.histogram), let handler = imageHandler.withLock({ $0 }) else { return }
        var previewPath: String?
        if let preview = analysed.preview {
            let url = URL(fileURLWithPath: path)
            let target = url.deletingLastPathComponent().appendingPathComponent("previews")
                .appendingPathComponent(url.deletingPathExtension().lastPathComponent + ".jpg").path
            if (try? AtomicFile.write(preview, to: target, createDirectory: true)) != nil { previewPath = target }
        }
        handler(
            ShotLogImage(
                step: step, bracket: bracket, file: file.description, meanLevel: measures.meanLevel, brightnessEV: measures.brightnessEV,
                clippedHigh: measures.clippedHigh, clippedLow: measures.clippedLow, preview: previewPath,
                histogram: ShotLogImage.sixteenBins(analysed.histogram), width: own?.storedWidth, height: own?.storedHeight))
    }

    /// Takes one picture now (`rig camera capture`), with the same confirmation bound.
    public func captureOne(within seconds: Double) throws(CameraError) -> GPhoto2FilePath {
        try worker.run(within: seconds + 5, "capturing") { device throws(GPhoto2Error) in try device.capture() }.get()
    }

    /// The bytes of a file on the camera.
    public func download(_ file: GPhoto2FilePath) throws(CameraError) -> Data {
        try worker.run(within: 120, "downloading \(file)") { device throws(GPhoto2Error) in try device.download(file) }.get()
    }

    // MARK: Tap to focus

    /// The settings that place the AF point, as libgphoto2 names them, and how the two
    /// coordinates are joined in their text.
    static let focusPointSettings: [(name: String, separator: String)] = [("changeafarea", "x"), ("eoszoomposition", ","), ("spotfocusarea", ",")]

    /// What the camera offers for tap to focus: found once, when it is opened.
    private struct FocusPointControl: Sendable {
        var setting: String
        var separator: String
        /// "autofocusdrive" (focuses once set), if the camera has it.
        var autofocus: String?
        /// Its "imagesize" ("6000x4000"), the AF point's coordinates where it says it.
        var imageSize: FocusGrid?
    }
    private let focusPoint = Mutex<Result<FocusPointControl, CameraError>?>(nil)

    /// Looks for a writable AF point setting among `focusPointSettings` (none on libgphoto2's
    /// virtual camera).
    private func findFocusPoint() {
        let found = worker.run(within: 15, "looking for the AF point setting") { device -> FocusPointControl? in
            guard let (name, separator) = Self.focusPointSettings.first(where: { (try? device.widget($0.name)).map { !$0.readOnly } ?? false }) else {
                return nil
            }
            let autofocus = (try? device.widget("autofocusdrive")).map { _ in "autofocusdrive" }
            let size = (try? device.widget("imagesize"))?.value.flatMap(Self.pixelSize)
            return FocusPointControl(setting: name, separator: separator, autofocus: autofocus, imageSize: size)
        }
        let names = Self.focusPointSettings.map(\.name)
        let line =
            "this camera offers no AF point through libgphoto2 (no \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "") setting): tap to focus is not available"
        let result: Result<FocusPointControl, CameraError> =
            switch found {
            case .success(let control?): .success(control)
            case .success(nil): .failure(CameraError(line, refused: true))
            case .failure(let error): .failure(error)
            }
        if case .success(let control) = result { logger.info("camera: tap to focus through \"\(control.setting)\"") }
        focusPoint.withLock { $0 = result }
    }

    /// "6000x4000" as a grid.
    static func pixelSize(_ text: String) -> FocusGrid? {
        let parts = text.lowercased().split(separator: "x").map { Int($0.trimmed()) }
        guard parts.count == 2, let w = parts[0], let h = parts[1], w > 0, h > 0 else { return nil }
        return FocusGrid(width: w, height: h)
    }

    public var focusPointProblem: String? {
        switch focusPoint.withLock({ $0 }) {
        case .success: nil
        case .failure(let error): error.description
        case nil: "the camera was not asked for its AF point"
        }
    }

    /// Sets the AF point (in the camera's image size's pixels, else the live view's own) and,
    /// where the camera has "autofocusdrive", focuses there. Not tried on a real camera here:
    /// the coordinates each brand expects are libgphoto2's documented ones.
    public func focus(viewX x: Double, viewY y: Double, viewAspect: Double) throws(CameraError) -> FocusReport {
        guard let found = focusPoint.withLock({ $0 }) else { throw CameraError("the camera was not asked for its AF point") }
        let control = try found.get()
        let frameSize = live.feed.newestFrame.flatMap { JPEG.decode($0.jpeg) }.map { FocusGrid(width: $0.width, height: $0.height) }
        guard let grid = control.imageSize ?? frameSize else {
            throw CameraError("the camera says no image size and has sent no live-view frame: the AF point's coordinates are unknown", refused: true)
        }
        let point = grid.point(viewX: x, viewY: y, viewAspect: viewAspect)
        let value = "\(point.x)\(control.separator)\(point.y)"
        try worker.run(within: 15, "setting \"\(control.setting)\"") { device throws(GPhoto2Error) in try device.set(control.setting, value) }.get()
        if let autofocus = control.autofocus {
            try worker.run(within: 15, "focusing") { device throws(GPhoto2Error) in try device.set(autofocus, "1") }.get()
        }
        return FocusReport(grid: grid, cameraX: point.x, cameraY: point.y, setting: "\(control.setting)=\(value)")
    }

    public func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        // The viewfinder is released before the camera closes.
        live.finish(within: GPhoto2LiveView.callSeconds + 1)
        worker.close(within: 5)
    }

    public var isClosed: Bool { closed.load(ordering: .relaxed) }
}

/// A shot's watchdog: past its end without a report, a libgphoto2 call has hung. The end
/// moves later while the shot runs (its copy's own time, once the camera confirmed the file).
private final class ShotWatch: Sendable {
    private let reported = Atomic<Bool>(false)
    private let end: Mutex<DispatchTime>

    init(seconds: Double) {
        end = Mutex(.now() + seconds)
    }

    /// True the first time only: the shot is reported once.
    func report() -> Bool {
        reported.exchange(true, ordering: .acquiringAndReleasing) == false
    }

    /// Gives the shot `seconds` more from now (never less than it had).
    func extend(by seconds: Double) {
        end.withLock { $0 = max($0, .now() + seconds) }
    }

    /// Calls `expired` once the end has passed with no report.
    func start(expired: @escaping @Sendable () -> Void) {
        let deadline = end.withLock { $0 }
        DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
            guard !reported.load(ordering: .acquiring) else { return }
            if end.withLock({ $0 }) > deadline { start(expired: expired) } else { expired() }
        }
    }
}

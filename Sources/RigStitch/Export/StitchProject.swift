import FoundationEssentials
import Glibc
import RigCore
import RigFormat

/// One image for a stitcher: where the rig pointed the camera and what the file is called.
public struct StitchShot: Sendable, Equatable {
    /// The camera's number for the file (the `%d` of the name pattern).
    public var imageNumber: Int
    public var imageName: String
    /// The program step it belongs to (1-based) and its label.
    public var step: Int
    public var label: String
    /// Its place in a bracket at that step, 1-based (1 without brackets).
    public var bracket: Int
    /// Every axis's position, in the rig's axis order.
    public var pose: [Double]
    /// Hugin's yaw and pitch (``StitchAngles``); 0 when the rig has no pan (tilt) axis.
    public var yawDegrees: Double
    public var pitchDegrees: Double
    /// From a shot log: the shutter's start and end on the run's trace clock, whether the
    /// take was a redo, and its wall-clock start: the shot's own `at` (to the millisecond),
    /// else, in older logs, its run's `startedAt` (whole seconds) plus `startSeconds`.
    public var startSeconds: Double?
    public var endSeconds: Double?
    public var redo: Bool
    public var time: Date?
    /// From a shot log: the downloaded file's own size, when the run decoded it (else the
    /// project's `imageSize` stands for it).
    public var imageSize: PixelSize?
    /// From a shot log: the frame's exposure value (Hugin's `Eev`) from the settings it was
    /// taken with (``ExposureValue``), when its shutter speed is known.
    public var exposureValue: Double?
    /// From a shot log: the camera settings the frame was taken with, and where it was
    /// downloaded to (as logged), for its XMP sidecar.
    public var settings: [CameraSetting] = []
    public var downloaded: String?

    public init(
        imageNumber: Int, imageName: String, step: Int, label: String, bracket: Int = 1, pose: [Double],
        yawDegrees: Double, pitchDegrees: Double, startSeconds: Double? = nil, endSeconds: Double? = nil,
        redo: Bool = false, time: Date? = nil, imageSize: PixelSize? = nil, exposureValue: Double? = nil
    ) {
        self.imageSize = imageSize
        self.exposureValue = exposureValue
        self.imageNumber = imageNumber
        self.imageName = imageName
        self.step = step
        self.label = label
        self.bracket = bracket
        self.pose = pose
        self.yawDegrees = yawDegrees
        self.pitchDegrees = pitchDegrees
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.redo = redo
        self.time = time
    }
}

/// A planned panorama's grid, for Papywizard's `<mosaic>`.
public struct StitchMosaic: Sendable, Equatable {
    public var rows: Int
    /// The most shots in a row.
    public var columns: Int
    /// The overlap the program asked for and the smallest real ones (0…1).
    public var wantedOverlap: Double
    public var horizontalOverlap: Double
    public var verticalOverlap: Double
}

/// What a stitcher file is written from: the shots of a program (`rig plan`) or of a shot
/// log (`rig export`), in shooting order.
public struct StitchProject: Sendable, Equatable {
    /// The program or log file it came from, for titles and comments.
    public var source: String
    public var axisNames: [String]
    /// The axes Hugin's yaw and pitch come from; nil when the rig has no such axis.
    public var panAxisName: String?
    public var tiltAxisName: String?
    public var lens: CameraLens?
    public var imageSize: PixelSize
    public var shots: [StitchShot]
    public var mosaic: StitchMosaic?
    /// How long the rig settles before each shot, when the program says.
    public var settleSeconds: Double?
    /// The program's exposure time (`"shoot": {"exposureSeconds"}`), when it gives one.
    public var exposureSeconds: Double?
    /// From a shot log: true, and the wall-clock times of its first and last shot when known.
    public var fromLog: Bool
    public var startTime: Date?
    public var endTime: Date?

    /// Shots per step (brackets).
    public var bracketCount: Int { shots.map(\.bracket).max() ?? 1 }

    /// Why this project cannot become a Hugin or Papywizard file, or nil when it can.
    public var stitcherProblem: String? {
        if lens == nil { return "the lens is missing" }
        if panAxisName == nil { return "the rig has no pan axis (an axis named \"pan\", or the panorama's \"panAxis\")" }
        return nil
    }

    /// The pan and tilt axes: a panorama's `panAxis`/`tiltAxis`, else axes named `pan` and `tilt`.
    static func panTilt(program: Program?, axisNames: [String]) -> (pan: String?, tilt: String?) {
        if let program, let spec = program.panoramaSpec {
            return (program.rig.axes[spec.panAxis].name, program.rig.axes[spec.tiltAxis].name)
        }
        return (axisNames.contains("pan") ? "pan" : nil, axisNames.contains("tilt") ? "tilt" : nil)
    }

    /// The shots a stepped program takes, one image per step (and per bracket, with the
    /// program's `shotsPerStep`), numbered from `firstNumber`. `lens` overrides the
    /// program's (a panorama's lens); `imageSize` defaults to the lens's.
    public static func plan(_ program: Program, lens: CameraLens?, imageSize: PixelSize?, names: ImageNamePattern, firstNumber: Int) -> StitchProject {
        let axisNames = program.rig.axes.map(\.name)
        let (pan, tilt) = panTilt(program: program, axisNames: axisNames)
        let panIndex = pan.flatMap { axisNames.firstIndex(of: $0) }
        let tiltIndex = tilt.flatMap { axisNames.firstIndex(of: $0) }
        let lens = chooseLens(lens, program: program)
        let brackets = max(1, program.shoot.shotsPerStep)
        var shots: [StitchShot] = []
        for (index, step) in program.steps.enumerated() {
            for bracket in 1...brackets {
                let number = firstNumber + shots.count
                shots.append(
                    StitchShot(
                        imageNumber: number, imageName: names.name(number), step: index + 1, label: step.label,
                        bracket: bracket, pose: step.pose,
                        yawDegrees: panIndex.map { StitchAngles.yaw(panDegrees: step.pose[$0]) } ?? 0,
                        pitchDegrees: tiltIndex.map { StitchAngles.pitch(tiltDegrees: step.pose[$0]) } ?? 0))
            }
        }
        var mosaic: StitchMosaic?
        if let plan = program.panorama, let spec = program.panoramaSpec {
            mosaic = StitchMosaic(
                rows: plan.rows, columns: plan.shotsPerRow.max() ?? 1, wantedOverlap: spec.overlap,
                horizontalOverlap: plan.horizontalOverlap, verticalOverlap: plan.verticalOverlap)
        }
        return StitchProject(
            source: program.file, axisNames: axisNames, panAxisName: pan, tiltAxisName: tilt, lens: lens,
            imageSize: imageSize ?? lens?.defaultImageSize ?? PixelSize(width: PixelSize.defaultWidth, height: 4000),
            shots: shots, mosaic: mosaic, settleSeconds: program.settleSeconds,
            exposureSeconds: program.shoot.exposureSeconds > 0 ? program.shoot.exposureSeconds : nil, fromLog: false)
    }

    /// The shots a run really took, from its shot log: the poses as sent, one image per
    /// step and bracket (a redo replaces the take it redid), in the order the steps were
    /// first shot. The camera numbers every take, redos and interrupted takes included, so take k of the log
    /// (counting from 0) is image `firstNumber + k`.
    /// - Parameters:
    ///   - program: the program the log ran, for the pan/tilt axes, settle time and lens.
    ///   - loggedNames: name each image as the log does where it can (the downloaded path,
    ///     else the camera's file name), the pattern only where it cannot.
    public static func export(
        _ log: ShotLog, file: String, program: Program?, lens: CameraLens?, imageSize: PixelSize?,
        names: ImageNamePattern, firstNumber: Int, loggedNames: Bool = true
    ) -> StitchProject {
        // Every take with its number and wall-clock time: times count from their run's start.
        struct Take {
            var shot: ShotLogShot
            var number: Int
            var time: Date?
        }
        var takes: [Take] = []
        var runStart: Date?
        for event in log.events {
            switch event {
            case .start(let start): runStart = start.startedAt.flatMap(UTCTime.parse).map { Date(timeIntervalSince1970: $0) }
            case .shot(let shot):
                let own = shot.at.flatMap(UTCTime.parse).map { Date(timeIntervalSince1970: $0) }
                takes.append(Take(shot: shot, number: firstNumber + takes.count, time: own ?? runStart.map { $0.addingTimeInterval(shot.startSeconds) }))
            default: break
            }
        }
        let finals: [Take] = log.finalShots.compactMap { final in
            takes.last { !$0.shot.interrupted && $0.shot.step == final.step && ($0.shot.bracket ?? 1) == (final.bracket ?? 1) }
        }
        var axisNames = program?.rig.axes.map(\.name) ?? []
        for take in takes { for name in take.shot.axisNames where !axisNames.contains(name) { axisNames.append(name) } }
        let (pan, tilt) = panTilt(program: program, axisNames: axisNames)
        let lens = chooseLens(lens, program: program)
        // Sizes measured from the files themselves, unless the command line gave one.
        let measured = imageSize == nil ? loggedImageSizes(log) : [:]
        let exposures = ExposureValue.values(of: finals.map(\.shot.settings))
        let shots = finals.enumerated().map { index, take in
            let s = take.shot
            let logged = loggedNames ? s.downloaded ?? s.file.map { String($0.split(separator: "/").last ?? "") } : nil
            var shot = StitchShot(
                imageNumber: take.number, imageName: logged.flatMap(usableImageName) ?? names.name(take.number), step: s.step, label: s.label,
                bracket: s.bracket ?? 1, pose: axisNames.map { s.value(of: $0) ?? .nan },
                yawDegrees: pan.flatMap { s.value(of: $0) }.map { StitchAngles.yaw(panDegrees: $0) } ?? 0,
                pitchDegrees: tilt.flatMap { s.value(of: $0) }.map { StitchAngles.pitch(tiltDegrees: $0) } ?? 0,
                startSeconds: s.startSeconds, endSeconds: s.endSeconds, redo: s.redo, time: take.time,
                imageSize: s.file.flatMap { measured[$0] }, exposureValue: exposures[index])
            shot.settings = s.settings
            shot.downloaded = s.downloaded
            return shot
        }
        let panInShots = pan.map { name in finals.allSatisfy { $0.shot.value(of: name) != nil } } ?? false
        return StitchProject(
            source: file, axisNames: axisNames, panAxisName: panInShots ? pan : nil, tiltAxisName: tilt, lens: lens,
            imageSize: imageSize ?? shots.lazy.compactMap(\.imageSize).first ?? lens?.defaultImageSize
                ?? PixelSize(width: PixelSize.defaultWidth, height: 4000),
            shots: shots, mosaic: nil, settleSeconds: program?.settleSeconds,
            exposureSeconds: program.flatMap { $0.shoot.exposureSeconds > 0 ? $0.shoot.exposureSeconds : nil }, fromLog: true,
            startTime: shots.compactMap(\.time).min(),
            endTime: shots.compactMap { s in s.time.map { $0.addingTimeInterval((s.endSeconds ?? 0) - (s.startSeconds ?? 0)) } }.max())
    }

    /// The size of each downloaded file the log measured (`image` events with a size), by
    /// the camera's file name (the `shot` event's `file`).
    public static func loggedImageSizes(_ log: ShotLog) -> [String: PixelSize] {
        var sizes: [String: PixelSize] = [:]
        for event in log.events {
            if case .image(let image) = event, let width = image.width, let height = image.height {
                sizes[image.file] = PixelSize(width: width, height: height)
            }
        }
        return sizes
    }

    /// The first measured file size in the log (the field of view given as `--hfov` is of
    /// an image of that shape).
    public static func firstLoggedImageSize(_ log: ShotLog) -> PixelSize? {
        for event in log.events {
            if case .image(let image) = event, let width = image.width, let height = image.height { return PixelSize(width: width, height: height) }
        }
        return nil
    }

    /// A name from a shot log as an image name, or nil if a stitcher file cannot hold it
    /// (Hugin quotes names in "…"; a line break would end the line).
    static func usableImageName(_ name: String) -> String? {
        guard !name.isEmpty, !name.contains("\""), !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return name
    }

    /// The lens given on the command line (`--hfov`), mounted as the program's camera is
    /// (portrait stays portrait), else the program's.
    static func chooseLens(_ given: CameraLens?, program: Program?) -> CameraLens? {
        guard var lens = given else { return program?.panoramaSpec?.lens }
        if let mounted = program?.panoramaSpec?.lens?.orientation { lens.orientation = mounted }
        return lens
    }
}

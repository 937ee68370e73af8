import Foundation
import RigCore
import RigFormat
import RigSky
import RigTestSupport
import Testing

/// exiftool (Debian's `libimage-exiftool-perl`, installed by `scripts/setup --test`) reads
/// the sidecars `rig export --format xmp` writes.
enum ExifTool {
    static let path = ["/usr/bin/exiftool", "/usr/local/bin/exiftool"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let missing = "exiftool is not installed: run scripts/setup --test, or apt-get install libimage-exiftool-perl"

    /// Every tag exiftool reads in `files`, as numbers where it can (`-n`), by file.
    static func read(_ files: [String]) throws -> [String: [String: Any]] {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: path ?? "exiftool")
        process.arguments = ["-json", "-n", "-G1", "-struct"] + files
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let list = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] ?? []
        var byFile: [String: [String: Any]] = [:]
        for entry in list { if let file = entry["SourceFile"] as? String { byFile[file] = entry } }
        return byFile
    }
}

/// `rig export RUNLOG --format xmp`: one sidecar per downloaded frame.
@Suite struct XMPSidecarTests {
    /// A bracketed ramp's frames as a gphoto2 camera logs them (settings and downloaded
    /// copies in `dir/frames`), over two runs (the second resumed), step 2 redone.
    static let frames: [(step: Int, bracket: Int?, shutter: String, aperture: String, iso: String, bias: String, at: String, redo: Bool)] = [
        (1, 1, "1/250", "f/8", "100", "0", "2026-11-23T20:00:01.125Z", false),
        (1, 2, "1/60", "f/8", "100", "+2", "2026-11-23T20:00:01.410Z", false),
        (2, 1, "1/4", "f/5.6", "400", "-0.333", "2026-11-23T20:00:05.002Z", false),
        (2, 2, "1/15", "f/5.6", "400", "0.7", "2026-11-23T20:00:05.301Z", false),
        (2, 1, "2.5", "f/2.8", "1600", "-1", "2026-11-23T20:00:09.999Z", true),
        (2, 2, "30", "f/2.8", "3200", "0", "2026-11-23T20:00:12.500Z", true),
        (3, 1, "13/10", "f/11", "6400", "1/3", "2026-11-23T21:30:00.040Z", false),
        (3, 2, "1/8000", "f/1.4", "50", "-5", "2026-11-23T21:30:01.000Z", false),
    ]

    static func writeLog(in dir: String, withTimes: Bool = true) throws -> String {
        try FileManager.default.createDirectory(atPath: dir + "/frames", withIntermediateDirectories: true)
        var lines = [
            #"{"event":"start","program":"gone.json","programSha256":"\#(String(repeating: "0", count: 64))","steps":3,"startedAt":"2026-11-23T20:00:00Z"}"#
        ]
        for (k, f) in frames.enumerated() {
            if k == 6 {
                lines.append(#"{"event":"end","reason":"stopped","lastStep":2}"#)
                lines.append(
                    #"{"event":"start","program":"gone.json","programSha256":"\#(String(repeating: "0", count: 64))","steps":3,"startedAt":"2026-11-23T21:29:59Z","fromStep":3}"#
                )
            }
            let image = dir + "/frames/IMG_\(String(format: "%04d", k + 1)).JPG"
            try "not a JPEG".write(toFile: image, atomically: true, encoding: .utf8)
            let start = Double(k) * 2 + 1
            lines.append(
                #"{"event":"shot","step":\#(f.step),"label":"s\#(f.step)","pose":{"pan":\#(f.step * 10),"tilt":-5.5},"startSeconds":\#(start),"endSeconds":\#(start + 0.5)"#
                    + (f.redo ? #","redo":true"# : "") + (f.bracket.map { #","bracket":\#($0)"# } ?? "")
                    + (withTimes ? #","at":"\#(f.at)""# : "")
                    + #","file":"/store_00010001/DCIM/100CANON/IMG_\#(String(format: "%04d", k + 1)).JPG","downloaded":\#(JSONText.string(image))"#
                    + #","settings":{"shutterspeed":"\#(f.shutter)","f-number":"\#(f.aperture)","iso":"\#(f.iso)","exposurecompensation":"\#(f.bias)"}}"#)
        }
        lines.append(#"{"event":"end","reason":"done","lastStep":3}"#)
        let path = dir + "/run.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func newDir() throws -> String {
        (try RigProcess.temporaryFile("x") as NSString).deletingLastPathComponent
    }

    /// The frames the export keeps: step 2's redo replaces its first takes.
    static let kept = [0, 1, 4, 5, 6, 7]

    @Test(.blocking) func sidecarsGoBesideTheFramesAndAreNeverReplacedWithoutForce() throws {
        let dir = try Self.newDir()
        let log = try Self.writeLog(in: dir)
        let first = try RigProcess.run(["export", log, "--format", "xmp"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("wrote 6 XMP sidecars beside the frames"), "\(first.stdout)")
        let written = try FileManager.default.contentsOfDirectory(atPath: dir + "/frames").filter { $0.hasSuffix(".xmp") }.sorted()
        #expect(written == Self.kept.map { "IMG_\(String(format: "%04d", $0 + 1)).xmp" })

        // An edited sidecar (Lightroom's, LRTimelapse's) stays as it is.
        let edited = dir + "/frames/IMG_0001.xmp"
        try "<x:xmpmeta>edited</x:xmpmeta>\n".write(toFile: edited, atomically: true, encoding: .utf8)
        let again = try RigProcess.run(["export", log, "--format", "xmp"])
        #expect(again.status == 2)
        #expect(again.stderr.contains("6 sidecars exist"), "\(again.stderr)")
        #expect(again.stderr.contains("--force"))
        #expect(try String(contentsOfFile: edited, encoding: .utf8) == "<x:xmpmeta>edited</x:xmpmeta>\n")
        let forced = try RigProcess.run(["export", log, "--format", "xmp", "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.stdout.contains("(6 replaced)"))
        #expect(try String(contentsOfFile: edited, encoding: .utf8).contains("exif:ExposureTime=\"1/250\""))
    }

    @Test(.blocking) func minusOWritesIntoAFolderAndFramesThatAreGoneAreRefused() throws {
        let dir = try Self.newDir()
        let log = try Self.writeLog(in: dir)
        let out = dir + "/sidecars"
        let result = try RigProcess.run(["export", log, "--format", "xmp", "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).count == 6)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/frames").allSatisfy { !$0.hasSuffix(".xmp") })

        try FileManager.default.removeItem(atPath: dir + "/frames/IMG_0007.JPG")
        let gone = try RigProcess.run(["export", log, "--format", "xmp"])
        #expect(gone.status == 2)
        #expect(gone.stderr.contains("1 downloaded frame is not where the log says"), "\(gone.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/frames").allSatisfy { !$0.hasSuffix(".xmp") })
    }

    @Test(.blocking) func theCsvHasEveryFramesTrueTime() throws {
        let dir = try Self.newDir()
        let log = try Self.writeLog(in: dir)
        let csv = try RigProcess.run(["export", log, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        let rows = csv.stdout.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.first?.last == "time")
        #expect(rows.dropFirst().map { String($0.last ?? "") } == Self.kept.map { Self.frames[$0].at })

        // An older log without `at`: its run's start plus the shot's start on the run's clock.
        let older = try Self.writeLog(in: try Self.newDir(), withTimes: false)
        let fallback = try RigProcess.run(["export", older, "--format", "csv"])
        #expect(fallback.stdout.split(separator: "\n").last?.hasSuffix(",2026-11-23T21:30:14.000Z") == true, "\(fallback.stdout)")
    }

    @Test(.enabled(if: ExifTool.path != nil, Comment(rawValue: ExifTool.missing)))
    func exiftoolReadsBackEveryFramesExposureAndTime() throws {
        let dir = try Self.newDir()
        let log = try Self.writeLog(in: dir)
        let result = try RigProcess.run(["export", log, "--format", "xmp"])
        #expect(result.status == 0, "\(result.stderr)")
        let files = Self.kept.map { dir + "/frames/IMG_\(String(format: "%04d", $0 + 1)).xmp" }
        let tags = try ExifTool.read(files)
        #expect(tags.count == 6)
        for (k, file) in zip(Self.kept, files) {
            let f = Self.frames[k]
            guard let t = tags[file] else {
                Issue.record("exiftool read nothing from \(file)")
                continue
            }
            func number(_ key: String) -> Double? { (t[key] as? NSNumber)?.doubleValue }
            let shutter = try #require(ShutterSpeed.seconds(f.shutter))
            let aperture = try #require(Aperture.number(f.aperture))
            let iso = try #require(Double(f.iso))
            // exif:ISOSpeedRatings is exiftool's ISO, a list.
            let isoRead = (t["XMP-exif:ISO"] as? [NSNumber])?.first?.doubleValue
            let read = (number("XMP-exif:ExposureTime"), number("XMP-exif:FNumber"), isoRead, number("XMP-exifEX:PhotographicSensitivity"))
            guard let t0 = read.0, let n = read.1, let s = read.2, let s2 = read.3 else {
                Issue.record("\(file): exposure tags missing: \(t)")
                continue
            }
            // The exposure read back, against the log's, to 0.02 EV.
            let logged = log2(aperture * aperture / shutter) - log2(iso / 100)
            let back = log2(n * n / t0) - log2(s / 100)
            #expect(abs(back - logged) <= 0.02, "\(file): \(back) EV read back, \(logged) EV logged")
            #expect(abs(log2(t0 / shutter)) <= 0.02 && abs(2 * log2(n / aperture)) <= 0.02 && s == s2 && abs(log2(s / iso)) <= 0.02, "\(file)")
            // Cameras print thirds of a stop rounded (0.7 is +2/3).
            let bias = ["0": 0, "+2": 2, "-0.333": -1.0 / 3, "0.7": 2.0 / 3, "-1": -1, "1/3": 1.0 / 3, "-5": -5][f.bias] ?? .nan
            // exif:ExposureBiasValue is exiftool's ExposureCompensation.
            #expect(abs((number("XMP-exif:ExposureCompensation") ?? .nan) - bias) <= 0.02, "\(file): \(t["XMP-exif:ExposureCompensation"] ?? "none")")
            // The shot's true time, with its milliseconds, in every date exiftool reads.
            let expected = f.at.replacingOccurrences(of: "-", with: ":").replacingOccurrences(of: "T", with: " ")
            for key in ["XMP-exif:DateTimeOriginal", "XMP-xmp:CreateDate", "XMP-photoshop:DateCreated"] {
                #expect(t[key] as? String == expected, "\(file) \(key): \(t[key] ?? "none")")
            }
            // rig's own fields.
            #expect(number("XMP-rig:Step") == Double(f.step))
            #expect(number("XMP-rig:Bracket") == Double(f.bracket ?? 1))
            #expect(((t["XMP-rig:Redo"] as? NSNumber)?.boolValue ?? false) == f.redo)
            let pose = t["XMP-rig:Pose"] as? [[String: Any]]
            #expect(pose?.map { $0["Axis"] as? String } == ["pan", "tilt"], "\(t["XMP-rig:Pose"] ?? "none")")
            #expect(pose?.map { ($0["Position"] as? NSNumber)?.doubleValue } == [Double(f.step * 10), -5.5])
            #expect(abs((number("XMP-rig:ExposureValue") ?? .nan) - logged) <= 0.001)
        }
    }

    /// A real run: `rig play` records each frame's time, and the sidecars carry it.
    @Test(.blocking) func aPlayedRunsSidecarsCarryTheTimesItRecorded() throws {
        let programPath = try RigProcess.temporaryFile("small.json", contents: PlayThenExportTests.program)
        let dir = (programPath as NSString).deletingLastPathComponent
        let logPath = dir + "/run.jsonl"
        let before = Date().timeIntervalSince1970
        let play = try RigProcess.run(["play", programPath, "--log", logPath, "--no-realtime", "--speed", "5"])
        #expect(play.status == 0, "\(play.stderr)")
        let after = Date().timeIntervalSince1970
        let log = try ShotLog(text: String(contentsOfFile: logPath, encoding: .utf8), file: logPath)
        let times = log.shots.compactMap { $0.at.flatMap(UTCTime.parse) }
        #expect(times.count == log.shots.count)
        #expect(times.allSatisfy { $0 >= before - 0.001 && $0 <= after } && times == times.sorted())

        // The camera downloaded nothing: beside the frames is refused, -o DIR names them by --names.
        let beside = try RigProcess.run(["export", logPath, "--format", "xmp"])
        #expect(beside.status == 2)
        #expect(beside.stderr.contains("no frame was downloaded"), "\(beside.stderr)")
        let out = dir + "/xmp"
        let export = try RigProcess.run(["export", logPath, "--format", "xmp", "-o", out, "--names", "P%03d.JPG"])
        #expect(export.status == 0, "\(export.stderr)")
        for (k, shot) in log.shots.enumerated() {
            let text = try String(contentsOfFile: out + "/P\(String(format: "%03d", k + 1)).xmp", encoding: .utf8)
            #expect(text.contains("exif:DateTimeOriginal=\"\(shot.at ?? "?")\""))
        }
    }
}

import Foundation
import RigCore
import RigTestSupport
import Testing

/// rig's libgphoto2 camera code end to end against libgphoto2's virtual camera (a Nikon
/// D750 on a virtual USB port, `VirtualCamera`): detection, settings, a bracketed panorama
/// whose log names every file, refusals before anything moves, a full card and a camera
/// that stops answering mid-run. Where the virtual camera is not installed these are
/// skipped with a loud reason (CI installs it through `scripts/setup --test`).
@Suite(.enabled(if: VirtualCamera.available, Comment(rawValue: VirtualCamera.missing)))
struct CameraEndToEndTests {
    let pictures: URL
    let environment: [String: String]
    let dir: URL

    init() throws {
        pictures = try VirtualCamera.pictures()
        environment = VirtualCamera.environment(pictures: pictures)
        dir = try TestTools.temporaryDirectory()
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = dir.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func rig(_ args: [String]) throws -> RigProcess.Result {
        try RigProcess.run(args, environment: environment)
    }

    func rigFile(camera extra: String = "") throws -> String {
        try write(
            "rig.json",
            #"{"name": "gp", "loopRateHz": 50, "axes": [{"name": "pan", "channel": 0, "softLimits": [-80, 80]}, {"name": "tilt", "channel": 1, "softLimits": [-40, 40]}], "camera": {"type": "gphoto2", "afterShotMs": 0\#(extra)}}"#
        )
    }

    func events(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test(.blocking) func findsTheCameraAndTakesOnlyItsOwnChoices() throws {
        let list = try rig(["camera", "list"])
        #expect(list.status == 0)
        #expect(list.stdout.contains("Nikon DSC D750\tusb:001,001"))

        let info = try rig(["camera", "info"])
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("shutter (shutterspeed): 0.0100s [1.0000s, 0.1000s"))
        #expect(info.stdout.contains("aperture (f-number): f/2.8"))
        #expect(info.stdout.contains("battery: 50%"))
        // libgphoto2's storage information, as the virtual camera reports its card.
        #expect(info.stdout.contains("card: GPVC Storage: 556 MB free of 1.1 GB, about 150 frames"), "\(info.stdout)")

        // A value the camera does not list: refused, naming its choices.
        let wrong = try rig(["camera", "set", "shutterspeed", "1/3"])
        #expect(wrong.status == 2)
        #expect(wrong.stderr.contains(#""1/3" is not one of shutterspeed's choices: "1.0000s", "0.1000s""#))
        // A speed the camera lists in its own spelling ("0.1000s"), written as a program
        // would ("1/10"): matched as a program's is, and the camera's value written.
        let spelled = try rig(["camera", "set", "shutterspeed", "1/10"])
        #expect(spelled.status == 0, "\(spelled.stderr)")
        #expect(spelled.stdout == "shutterspeed: 0.1000s\n", "\(spelled.stdout)")
        // One of its choices: written, and read back from the camera.
        let right = try rig(["camera", "set", "f-number", "f/8"])
        #expect(right.status == 0, "\(right.stderr)")
        #expect(right.stdout == "f-number: f/8\n")
        let readOnly = try rig(["camera", "set", "batterylevel", "90%"])
        #expect(readOnly.status == 2)
        #expect(readOnly.stderr.contains("read-only"))
        // libgphoto2's bare "Bad parameters" comes with what it means and what to try.
        let unknown = try rig(["camera", "get", "nosuchsetting"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("Bad parameters: the camera has no such setting"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("`rig camera get` lists its settings"), "\(unknown.stderr)")

        let out = dir.appendingPathComponent("captured")
        let capture = try rig(["camera", "capture", "-o", out.path])
        #expect(capture.status == 0, "\(capture.stderr)")
        let lines = capture.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("/store_00010001/DCIM/") == true)
        #expect(lines.count == 2)
        if lines.count == 2 { #expect(FileManager.default.contents(atPath: lines[1]) == VirtualCamera.bytes()) }
        // The next process's camera numbers from the start again: the copy takes a new name.
        let again = try rig(["camera", "capture", "-o", out.path])
        #expect(again.status == 0, "\(again.stderr)")
        let second = again.stdout.split(separator: "\n").map(String.init)
        #expect(second.count == 2 && second.last != lines.last && second.last?.hasSuffix("-2.JPG") == true, "\(second)")
        // A folder that cannot keep the copy: refused before the shutter fires.
        let refused = try rig(["camera", "capture", "-o", "/dev/null"])
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty, "nothing was taken")
        #expect(refused.stderr.contains("error: -o /dev/null: is a device (nothing written there is kept)"), "\(refused.stderr)")
    }

    @Test(.blocking) func aBracketedPanoramaLogsEveryFileTheCameraWrote() throws {
        let download = dir.appendingPathComponent("dl").path
        _ = try rigFile(camera: #", "download": "\#(download)""#)
        let program = try write(
            "pano.json",
            #"{"rig": "rig.json", "kind": "panorama", "trigger": "auto", "settleSeconds": 0.1, "shoot": {"exposure": {"aperture": "f/8"}, "bracket": {"count": 3, "stepEV": 1}}, "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "overlapPercent": 30, "pan": [-40, 40], "tilt": [0, 0]}}"#
        )
        let log = dir.appendingPathComponent("pano.jsonl").path
        let check = try rig(["check", program, "--camera"])
        #expect(check.stdout.contains("on Nikon DSC D750: every step brackets f-number=f/8 shutterspeed=0.0100s | f-number=f/8 shutterspeed=0.0050s"))
        let play = try rig(["play", program, "--log", log])
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stdout.contains("bracket of 3 at 1 EV: 0.0100s, 0.0050s, 0.0200s"))
        let shots = try events(log).filter { $0["event"] as? String == "shot" }
        #expect(shots.count == 9)
        let files = shots.compactMap { $0["file"] as? String }
        #expect(files.count == 9 && Set(files).count == 9, "every frame names its own file: \(files)")
        #expect(files.allSatisfy { $0.hasPrefix("/store_00010001/DCIM/") && $0.hasSuffix(".JPG") })
        // Each step: the base exposure, one stop under, one over — at the aperture asked for.
        for (i, shot) in shots.enumerated() {
            let settings = shot["settings"] as? [String: String] ?? [:]
            #expect(shot["bracket"] as? Int == i % 3 + 1)
            #expect(settings["shutterspeed"] == ["0.0100s", "0.0050s", "0.0200s"][i % 3])
            #expect(settings["f-number"] == "f/8")
            // Downloaded (the rig may move meanwhile; all are there once play returns).
            let path = try #require(shot["downloaded"] as? String)
            #expect(FileManager.default.contents(atPath: path) == VirtualCamera.bytes())
        }
        // Each download measured: 18 % grey is 0 EV, nothing clipped; a preview kept.
        let images = try events(log).filter { $0["event"] as? String == "image" }
        #expect(images.count == 9)
        for image in images {
            #expect(abs((image["brightnessEV"] as? Double ?? 99)) < 0.05)
            #expect(image["clippedHigh"] as? Double == 0 && image["clippedLow"] as? Double == 0)
            let preview = try #require(image["preview"] as? String)
            #expect(FileManager.default.fileExists(atPath: preview))
        }
        #expect(Set(images.compactMap { $0["file"] as? String }) == Set(files))
        // The stitcher file opens the downloaded files, in brackets stacked per position.
        let pto = try rig(["export", log, "--format", "pto"])
        #expect(pto.status == 0, "\(pto.stderr)")
        let lines = pto.stdout.split(separator: "\n").filter { $0.hasPrefix("i ") }
        #expect(lines.count == 9)
        for (image, shot) in zip(lines, shots) {
            #expect(image.hasSuffix("n\"\(shot["downloaded"] as? String ?? "?")\""))
        }
        #expect(lines.filter { $0.contains(" j=0 ") }.count == 2, "the second and third frames of the first stack")
        // Each image as the file really is (the virtual camera's 320×240), with its exposure:
        // the stack's frames one stop apart (1/100, 1/200, 1/50 s at f/8).
        #expect(images.allSatisfy { $0["width"] as? Int == 320 && $0["height"] as? Int == 240 })
        #expect(lines.allSatisfy { $0.hasPrefix("i w320 h240 ") }, "\(lines)")
        let evs = lines.compactMap { $0.split(separator: " ").first { $0.hasPrefix("Eev") }.flatMap { Double($0.dropFirst(3)) } }
        #expect(evs.count == 9)
        if evs.count == 9 {
            #expect(abs(evs[0] - log2(64 / 0.01)) < 1e-5 && abs(evs[1] - evs[0] - 1) < 1e-5 && abs(evs[2] - evs[0] + 1) < 1e-5, "\(evs)")
        }
        // Hugin's own remapper takes the project as it is (it refuses images whose size differs).
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/nona") {
            let project = dir.appendingPathComponent("pano.pto")
            try pto.stdout.write(to: project, atomically: true, encoding: .utf8)
            let nona = try RigProcess.run(
                ["-m", "TIFF_m", "-o", dir.appendingPathComponent("remapped").path, project.path], program: URL(fileURLWithPath: "/usr/bin/nona"))
            #expect(nona.status == 0, "\(nona.stderr)")
            let remapped = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("remapped") && $0.hasSuffix(".tif") }
            #expect(remapped.count == 9, "\(remapped) \(nona.stderr)")
        }
        // --names still wins when given.
        let named = try rig(["export", log, "--format", "csv", "--names", "DSC_%04d.NEF"])
        #expect(named.stdout.contains("DSC_0001.NEF"))
    }

    /// A keyframes path shooting on the move (`--interval`): every frame is in the shot log,
    /// in order, with the file the camera wrote (downloaded) and the pose the rig was at,
    /// along the path; `rig export` lists them.
    @Test(.blocking) func aPathShootingOnTheMoveLogsEveryFrame() throws {
        let download = dir.appendingPathComponent("path-dl").path
        _ = try rigFile(camera: #", "download": "\#(download)""#)
        let program = try write(
            "path.json", #"{"rig": "rig.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": -30}, {"t": 6, "value": 30}]}}"#)
        let log = dir.appendingPathComponent("path.jsonl").path
        let play = try rig(["play", program, "--interval", "1", "--log", log])
        #expect(play.status == 0, "\(play.stderr)")
        let all = try events(log)
        #expect(all.first?["event"] as? String == "start")
        let shots = all.filter { $0["event"] as? String == "shot" }
        #expect(shots.count == 6, "one a second over the 6 s path: \(shots.count)")
        #expect(shots.map { $0["step"] as? Int ?? 0 } == Array(1...shots.count))
        let pans = shots.compactMap { ($0["pose"] as? [String: Double])?["pan"] }
        #expect(pans.count == shots.count && zip(pans, pans.dropFirst()).allSatisfy { $0 < $1 }, "along the path: \(pans)")
        #expect(pans.allSatisfy { $0 >= -30 - 1e-6 && $0 <= 30 + 1e-6 })
        let files = shots.compactMap { $0["file"] as? String }
        #expect(files.count == shots.count && Set(files).count == files.count, "\(files)")
        for shot in shots {
            let path = try #require(shot["downloaded"] as? String, "\(shot)")
            #expect(FileManager.default.contents(atPath: path) == VirtualCamera.bytes())
        }
        let export = try rig(["export", log, "--format", "csv"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stdout.split(separator: "\n").count == shots.count + 1, "\(export.stdout)")
    }

    @Test(.blocking) func theCameraBenchmarkRunsRigAndTheFloorOnTheCamera() throws {
        let bench = try rig(["bench", "camera", "--pairs", "1", "--shots", "2", "--json"])
        #expect(bench.status == 0, "\(bench.stderr)")
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(bench.stdout.utf8)) as? [String: Any], "\(bench.stdout)")
        let pairs = try #require(figures["pairs"] as? [[String: Double]])
        #expect(pairs.count == 1)
        #expect((pairs.first?["rigMs"] ?? 0) > 0 && (pairs.first?["floorMs"] ?? 0) > 0)
        #expect(figures["panoramaShots"] as? Int == 9)
        #expect((figures["panoramaShotsPerMinute"] as? Double ?? 0) > 0)
    }

    @Test(.blocking) func aRampSetsTheNearestShutterSpeedTheCameraOffers() throws {
        _ = try rigFile()
        let program = try write(
            "ramp.json",
            #"{"rig": "rig.json", "kind": "timelapse", "trigger": "interval:2", "settleSeconds": 0.05, "shoot": {"ramp": {"mode": "keys", "maxStepEV": 3, "keys": [{"frame": 0, "ev": 10}, {"frame": 2, "ev": 4}]}}, "timelapse": {"frames": 3, "keyframes": {"pan": [{"frame": 0, "value": 0}, {"frame": 2, "value": 2}]}}}"#
        )
        let log = dir.appendingPathComponent("ramp.jsonl").path
        let play = try rig(["play", program, "--log", log])
        #expect(play.status == 0, "\(play.stderr)")
        // f/2.8 at ISO 100: EV 10 is 1/131 s, EV 7 1/16 s, EV 4 0.49 s; the camera's nearest speeds.
        let speeds = try events(log).filter { $0["event"] as? String == "shot" }.map { ($0["settings"] as? [String: String])?["shutterspeed"] }
        #expect(speeds == ["0.0100s", "0.0500s", "1.0000s"])
    }

    @Test(.blocking) func aClippedFrameIsMeasuredAsClipped() throws {
        let clipped = try VirtualCamera.pictures("clipped.jpg")
        let download = dir.appendingPathComponent("clipped").path
        _ = try rigFile(camera: #", "download": "\#(download)""#)
        let program = try write("one.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "steps": [{"pose": {"pan": 5}}]}"#)
        let log = dir.appendingPathComponent("clipped.jsonl").path
        let play = try RigProcess.run(["play", program, "--log", log], environment: VirtualCamera.environment(pictures: clipped))
        #expect(play.status == 0, "\(play.stderr)")
        let image = try #require(try events(log).first { $0["event"] as? String == "image" })
        // A quarter at 0, a quarter at 255 (JPEG ringing moves a few edge pixels).
        #expect(abs((image["clippedHigh"] as? Double ?? 0) - 0.25) < 0.02)
        #expect(abs((image["clippedLow"] as? Double ?? 0) - 0.25) < 0.02)
    }

    @Test(.blocking) func anExposureTheCameraCannotTakeIsRefusedBeforeAnythingMoves() throws {
        _ = try rigFile()
        let program = try write(
            "steps.json",
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "steps": [{"pose": {"pan": 10}}, {"pose": {"pan": 20}, "exposure": {"shutter": "1/8000"}}]}"#
        )
        let log = dir.appendingPathComponent("refused.jsonl").path
        let trace = dir.appendingPathComponent("refused.csv").path
        let play = try rig(["play", program, "--log", log, "--trace", trace])
        #expect(play.status == 2)
        #expect(
            play.stderr.contains(#"error: step 2 (step 2): shutter "1/8000" is not one of the camera's choices (shutterspeed): "1.0000s""#), "\(play.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log), "no run was begun")
        let rows = (try? Trace(path: trace).rows) ?? []
        #expect(rows.allSatisfy { $0.position == 0 }, "nothing moved")
        // check --camera says the same without moving anything; plain check says who matches.
        let checked = try rig(["check", program, "--camera"])
        #expect(checked.status == 2)
        #expect(checked.stderr.contains(#"step 2 (step 2): shutter "1/8000" is not one of the camera's choices"#), "\(checked.stderr)")
        #expect(try rig(["check", program]).stdout.contains("matched to the camera's choices by `rig play` (or here with --camera)"))
        // The virtual camera has no ISO: a program asking for one is told what it offers.
        let iso = try write(
            "iso.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"exposure": {"iso": 400}}, "steps": [{"pose": {"pan": 10}}]}"#)
        let noISO = try rig(["play", iso, "--log", log])
        #expect(noISO.status == 2)
        #expect(noISO.stderr.contains(#"the camera offers no iso setting; it offers "shutter", "aperture", "ev""#), "\(noISO.stderr)")
        // Its bulb control answers with an I/O error and it lists no Bulb speed: a bulb
        // program is refused with the speeds it has, before anything moves.
        let bulb = try write(
            "bulb.json",
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"bulb": true, "exposureSeconds": 40}, "steps": [{"pose": {"pan": 10}}]}"#)
        let noBulb = try rig(["play", bulb, "--log", log])
        #expect(noBulb.status == 2)
        #expect(noBulb.stderr.contains(#""bulb": true needs the camera's Bulb through libgphoto2, and this camera offers none"#), "\(noBulb.stderr)")
        #expect(noBulb.stderr.contains("(up to 1 s)"), "\(noBulb.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log), "no run was begun")
    }

    /// The virtual camera's longest speed is 1 s: five frames at 1 EV from 1 s would be
    /// four of 1 s. check and play refuse it before anything moves, with the span it has.
    @Test(.blocking) func aBracketTheCameraCannotSpanIsRefusedWithTheSpanItHas() throws {
        _ = try rigFile()
        let program = try write(
            "long.json",
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"exposure": {"shutter": "1"}, "bracket": {"count": 5, "stepEV": 1}}, "steps": [{"pose": {"pan": 5}}]}"#
        )
        let expected =
            #"error: shoot: a bracket of 5 at 1 EV around 1 s needs 1/4 s…4 s; the camera's shutter speeds reach 1/10000 s…1 s, so frames 1, 2, 3 and 5 would all be "1.0000s", and frame 4 would be off by more than a third of a stop. Around 1 s it spans 0.0 EV over and 13.3 EV under: no bracket at 1 EV there"#
        let check = try rig(["check", program, "--camera"])
        #expect(check.status == 2)
        #expect(check.stderr.contains(expected), "\(check.stderr)")
        let log = dir.appendingPathComponent("long.jsonl").path
        let play = try rig(["play", program, "--log", log])
        #expect(play.status == 2)
        #expect(play.stderr.contains(expected), "\(play.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log), "no run was begun")
        // Around 1/100 s the camera's speeds (1/200, 1/50) do make a bracket of 3.
        let fits = try write(
            "fits.json",
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "shoot": {"exposure": {"shutter": "0.01"}, "bracket": {"count": 3, "stepEV": 1}}, "steps": [{"pose": {"pan": 5}}]}"#
        )
        #expect(try rig(["check", fits, "--camera"]).status == 0)
    }

    @Test(.blocking) func aFullCardStopsTheRunCleanlyAndResumeFinishesIt() throws {
        // The virtual camera's card is full after 26 frames: the 27th is never confirmed.
        _ = try rigFile(camera: #", "confirmSeconds": 2"#)
        let steps = (0..<30).map { #"{"pose": {"pan": \#($0 % 2 * 2)}}"# }.joined(separator: ",")
        let program = try write("full.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "steps": [\#(steps)]}"#)
        let log = dir.appendingPathComponent("full.jsonl").path
        let play = try rig(["play", program, "--log", log])
        #expect(play.status == 1)
        #expect(play.stderr.contains("trying the shot once more"))
        #expect(play.stderr.contains("failed at step 27/30: the camera did not confirm the shot, tried twice"))
        #expect(play.stderr.contains("the card is full"))
        let logged = try events(log)
        #expect(logged.filter { $0["event"] as? String == "shot" }.count == 26)
        let missed = try #require(logged.first { $0["event"] as? String == "missed" })
        #expect(missed["step"] as? Int == 27)
        #expect((missed["reason"] as? String)?.contains("the card is full") == true)
        #expect(logged.last?["event"] as? String == "end" && logged.last?["reason"] as? String == "fault")

        // A new card (the next process): --resume shoots what was missed and the rest.
        let resumed = try rig(["play", program, "--log", log, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let all = try events(log)
        let shotSteps = all.filter { $0["event"] as? String == "shot" }.compactMap { $0["step"] as? Int }
        #expect(shotSteps == Array(1...30))
        #expect(all.last?["reason"] as? String == "done")
    }

    /// A download folder that cannot keep a file: refused before anything moves (exit 2,
    /// naming the folder and what is wrong), no run begun; `rig doctor` says so too.
    @Test(.blocking) func aDownloadFolderThatCannotKeepFilesIsRefusedBeforeAnythingMoves() throws {
        let file = try write("a-file", "not a folder")
        let fifo = dir.appendingPathComponent("a-fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let cases: [(path: String, problem: String)] = [
            (file, "is a file; give a folder for the downloads"),
            (fifo, "is a FIFO; give a folder for the downloads"),
            ("/dev/null", "is a device (nothing written there is kept)"),
            ("/proc/rigdl", "is on /proc, a kernel filesystem that keeps no files"),
            (file + "/shots", "cannot be made: \(file) is a file, not a folder"),
        ]
        let program = try write("one.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 9}}]}"#)
        for bad in cases {
            _ = try rigFile(camera: #", "download": "\#(bad.path)""#)
            let log = dir.appendingPathComponent("refused.jsonl").path
            let play = try rig(["play", program, "--log", log])
            #expect(play.status == 2, "\(bad.path): \(play.stderr)")
            #expect(play.stderr.contains(#"error: the camera's "download" folder \#(bad.path): \#(bad.problem)"#), "\(play.stderr)")
            #expect(!FileManager.default.fileExists(atPath: log), "no run was begun")
            #expect(!play.stdout.contains("▶"), "nothing started")
        }
        _ = try rigFile(camera: #", "download": "/proc/rigdl""#)
        let doctor = try rig(["doctor", "--rig", dir.appendingPathComponent("rig.json").path])
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("problem  download folder: /proc/rigdl: is on /proc"), "\(doctor.stdout)")
        let good = dir.appendingPathComponent("shots").path
        _ = try rigFile(camera: #", "download": "\#(good)""#)
        let fine = try rig(["doctor", "--rig", dir.appendingPathComponent("rig.json").path])
        #expect(fine.stdout.contains("download folder: \(good) is writable, "), "\(fine.stdout)")
    }

    /// The card fills at the last frame of a bracket at the last step: the run stops there
    /// (a `missed` naming the frame), and `--resume` (a new card) shoots that whole step
    /// again. Every `shot` names a copy that exists, and the second camera session, which
    /// numbers its files from the start again, overwrites none and reuses no name.
    @Test(.blocking) func aCardThatFillsMidBracketIsResumedWholeAndNoNameIsReused() throws {
        let download = dir.appendingPathComponent("dl").path
        _ = try rigFile(camera: #", "confirmSeconds": 2, "download": "\#(download)""#)
        // 9 steps of 3: the card's 26 frames end at step 9's second frame.
        let steps = (0..<9).map { #"{"pose": {"pan": \#($0 % 2 * 2)}}"# }.joined(separator: ",")
        let program = try write(
            "brackets.json",
            #"{"rig": "rig.json", "kind": "steps", "trigger": "auto", "settleSeconds": 0.05, "shoot": {"bracket": {"count": 3, "stepEV": 1}}, "steps": [\#(steps)]}"#
        )
        let log = dir.appendingPathComponent("brackets.jsonl").path
        let play = try rig(["play", program, "--log", log])
        #expect(play.status == 1, "\(play.stderr)")
        #expect(play.stderr.contains("failed at step 9/9 bracket 3/3"), "\(play.stderr)")
        let first = try events(log)
        #expect(first.filter { $0["event"] as? String == "shot" }.count == 26)
        let missed = try #require(first.first { $0["event"] as? String == "missed" })
        #expect(missed["step"] as? Int == 9 && missed["bracket"] as? Int == 3)
        #expect((missed["reason"] as? String)?.contains("the card is full") == true)

        let resumed = try rig(["play", program, "--log", log, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(resumed.stdout.contains("resuming \(log) at step 9 of 9"), "\(resumed.stdout)")
        let all = try ShotLog(text: String(contentsOfFile: log, encoding: .utf8), file: log)
        #expect(all.isFinished)
        let again = all.completeShots.dropFirst(26)
        #expect(again.map { "\($0.step)/\($0.bracket ?? 0)" } == ["9/1", "9/2", "9/3"])
        #expect(all.finalShots.count == 27)
        let copies = all.shots.compactMap(\.downloaded)
        #expect(copies.count == 29, "every shot names its copy")
        #expect(Set(copies.map { $0.lowercased() }).count == 29, "no name used twice: \(copies)")
        for copy in copies { #expect(FileManager.default.contents(atPath: copy) == VirtualCamera.bytes(), "\(copy)") }
        // The stitcher file names 27 distinct images, each a copy that exists.
        let pto = try rig(["export", log, "--format", "pto", "--hfov", "60"])
        #expect(pto.status == 0, "\(pto.stderr)")
        let names = pto.stdout.split(separator: "\n").filter { $0.hasPrefix("i ") }.compactMap { $0.split(separator: " n\"").last?.dropLast() }
        #expect(names.count == 27 && Set(names).count == 27, "\(names)")
    }

    @Test func aCameraThatStopsAnsweringMidRunStopsTheRun() async throws {
        _ = try rigFile(camera: #", "confirmSeconds": 2"#)
        let steps = (0..<4).map { #"{"pose": {"pan": \#($0 % 2 * 2)}}"# }.joined(separator: ",")
        let program = try write("gone.json", #"{"rig": "rig.json", "kind": "steps", "trigger": "keyboard", "settleSeconds": 0.05, "steps": [\#(steps)]}"#)
        let log = dir.appendingPathComponent("gone.jsonl").path
        let rig = try TerminalProcess(["play", program, "--log", log, "--no-realtime"], environment: environment)
        let stdout = rig.stdout
        // Step 1 shot; then the camera's pictures vanish and every later call fails.
        _ = try await poll(for: .seconds(60)) { stdout.count(" ready: Enter to ") >= 1 ? true : nil }
        try FileManager.default.removeItem(at: pictures)
        rig.type("\r")
        rig.process.waitUntilExit()
        rig.stderr.waitForEnd()
        #expect(rig.process.terminationStatus == 1, "\(rig.stderr.text)")
        let logged = try events(log)
        #expect(logged.filter { $0["event"] as? String == "shot" }.count == 1)
        let missed = try #require(logged.first { $0["event"] as? String == "missed" }, "\(rig.stderr.text)")
        #expect(missed["step"] as? Int == 2)
        #expect((missed["reason"] as? String)?.contains("the camera did not confirm the shot, tried twice") == true)
        #expect(logged.last?["event"] as? String == "end" && logged.last?["reason"] as? String == "fault")
        #expect(rig.stderr.text.contains("braking, then park"))
    }
}

/// Camera sections that are wrong whatever camera is plugged in.
@Suite struct CameraSectionTests {
    /// The keys rig/schema/rig.schema.json allows in a camera of `type`: its properties,
    /// minus those an if/then on that type forbids.
    static func schemaKeys(type: String) throws -> Set<String> {
        let data = try Data(contentsOf: TestTools.packageRoot.appendingPathComponent("schema/rig.schema.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let camera = try #require((root["$defs"] as? [String: Any])?["camera"] as? [String: Any])
        var keys = Set((camera["properties"] as? [String: Any] ?? [:]).keys)
        for rule in camera["allOf"] as? [[String: Any]] ?? [] {
            let condition = ((rule["if"] as? [String: Any])?["properties"] as? [String: Any])?["type"] as? [String: Any]
            guard condition?["const"] as? String == type else { continue }
            for (key, value) in (rule["then"] as? [String: Any])?["properties"] as? [String: Any] ?? [:] where value as? Bool == false {
                keys.remove(key)
            }
        }
        return keys
    }

    @Test(.blocking, arguments: ["sim", "gpio", "gphoto2"])
    func eachBackendAllowsTheKeysTheSchemaLists(_ type: String) throws {
        let path = try RigProcess.temporaryFile("r.json", contents: #"{"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "\#(type)", "zzzz": 0}}"#)
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 2)
        let range = try #require(check.stderr.range(of: "valid keys here: "), "\(check.stderr)")
        let line = check.stderr[range.upperBound...].prefix { $0 != "\n" }
        let parser = Set(line.split(separator: ", ").map { String($0.dropFirst().dropLast()) })
        #expect(parser == (try Self.schemaKeys(type: type)))
    }

    @Test(.blocking) func anUnknownCameraTypeNamesTheValidOnes() throws {
        let path = try RigProcess.temporaryFile("r.json", contents: #"{"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "usb"}}"#)
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 2)
        #expect(check.stderr.contains(#"r.json:1:62: error: $.camera.type: "usb" is not a camera type; valid: "sim", "gpio", "gphoto2""#), "\(check.stderr)")
        let ram = try RigProcess.temporaryFile(
            "r.json", contents: #"{"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "gphoto2", "captureTarget": "ram"}}"#)
        let noDownload = try RigProcess.run(["check", ram])
        #expect(noDownload.status == 2)
        #expect(
            noDownload.stderr.contains(#"$.camera.captureTarget: with "captureTarget": "ram" the file lives only until it is downloaded"#),
            "\(noDownload.stderr)")
    }

    @Test(.blocking) func aCameraThatCannotBeSetRefusesExposureBeforeOpeningAnything() throws {
        let path = try RigProcess.temporaryFile(
            "p.json",
            contents:
                #"{"rig": {"axes": [{"name": "pan", "channel": 0}], "camera": {"type": "gpio", "chip": "/dev/no-such-chip"}}, "kind": "steps", "trigger": "auto", "shoot": {"bracket": {"count": 3, "stepEV": 1}}, "steps": [{"pose": {"pan": 1}}]}"#
        )
        let play = try RigProcess.run(["play", path, "--log", path + ".jsonl"])
        #expect(play.status == 2)
        #expect(play.stderr.contains(#"a "gpio" camera cannot be set"#), "\(play.stderr)")
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 2)
        #expect(check.stderr.contains(#"a "gpio" camera cannot be set"#), "\(check.stderr)")
    }
}

import Foundation
import RigCore
import RigFormat
import RigTestSupport
import Testing

/// `rig plan --format …` and `rig export` through the real binary.
@Suite struct StitchCommandTests {
    /// A fresh folder holding copies of a program and the rig it names.
    static func copyProgram(_ name: String) throws -> (dir: String, program: String) {
        let program = try RigProcess.temporaryFile(name)
        let dir = (program as NSString).deletingLastPathComponent
        try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/\(name)").path, toPath: program)
        try FileManager.default.copyItem(atPath: RigProcess.packageRoot.appendingPathComponent("rigs/pantilt.json").path, toPath: dir + "/pantilt.json")
        return (dir, program)
    }

    /// A shot log of `rigs/pano.json`'s first three steps, step 2 shot twice (the second
    /// take nudged 0.5° right), named by absolute path or not at all.
    static func writeLog(in dir: String, program: String?) throws -> String {
        let path = dir + "/run.jsonl"
        let hash = String(repeating: "0", count: 64)
        let programField = program.map { JSONText.string($0) } ?? "\"gone.json\""
        try """
        {"event":"start","program":\(programField),"programSha256":"\(hash)","steps":23,"startedAt":"2026-11-23T20:00:00Z"}
        {"event":"shot","step":1,"label":"shot 1 (row 1, column 1)","pose":{"pan":-80,"tilt":-20},"startSeconds":1,"endSeconds":1.2}
        {"event":"shot","step":2,"label":"shot 2 (row 1, column 2)","pose":{"pan":-57.142857142857146,"tilt":-20},"startSeconds":4,"endSeconds":4.2}
        {"event":"shot","step":2,"label":"shot 2 (row 1, column 2)","pose":{"pan":-56.642857142857146,"tilt":-20},"startSeconds":7,"endSeconds":7.2,"redo":true}
        {"event":"shot","step":3,"label":"shot 3 (row 1, column 3)","pose":{"pan":-34.285714285714285,"tilt":-20},"startSeconds":10,"endSeconds":10.2}
        {"event":"end","reason":"stopped","lastStep":3}

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(.blocking, arguments: [("pto", "pano.pto"), ("papywizard", "pano.xml"), ("csv", "pano.csv"), ("json", "pano.json.out")])
    func planWritesTheSameTextToStdoutAndToTheFile(format: String, file: String) throws {
        let toStdout = try RigProcess.run(["plan", "rigs/pano.json", "--format", format])
        #expect(toStdout.status == 0, "\(toStdout.stderr)")
        let out = try RigProcess.temporaryFile(file)
        let toFile = try RigProcess.run(["plan", "rigs/pano.json", "--format", format, "-o", out])
        #expect(toFile.status == 0, "\(toFile.stderr)")
        #expect(toFile.stdout == "wrote \(out): 23 shots as \(format)\n")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == toStdout.stdout)
    }

    @Test(.blocking) func theFormatFollowsTheFileExtensionAndCsvIsAnAlias() throws {
        let out = try RigProcess.temporaryFile("pano.pto")
        #expect(try RigProcess.run(["plan", "rigs/pano.json", "-o", out]).status == 0)
        let text = try String(contentsOfFile: out, encoding: .utf8)
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("i ") }.count == 23)
        let alias = try RigProcess.run(["plan", "rigs/pano.json", "--csv"])
        let csv = try RigProcess.run(["plan", "rigs/pano.json", "--format", "csv"])
        #expect(alias.status == 0 && alias.stdout == csv.stdout)
        #expect(csv.stdout.hasPrefix("index,label,pan,tilt\n1,\"shot 1 (row 1, column 1)\",-80.00,-20.00\n"))
        let clash = try RigProcess.run(["plan", "rigs/pano.json", "--csv", "--format", "pto"])
        #expect(clash.status == 2)
        #expect(clash.stderr.contains("--csv and --format pto disagree"))
    }

    /// Cameras store images landscape; a portrait size would give Hugin a wrong field of
    /// view and roll, so it is refused with the landscape size to give instead.
    @Test(.blocking) func aPortraitImageSizeIsRefused() throws {
        let result = try RigProcess.run(["plan", "rigs/pano.json", "--format", "pto", "--image-size", "600x900"])
        #expect(result.status == 2)
        #expect(
            result.stderr.contains("error: --image-size 600x900 is portrait; give the size as the camera stores it, landscape (900x600)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test(.blocking) func outputPathsAreCheckedBeforeAnythingIsWritten() throws {
        let (dir, program) = try Self.copyProgram("pano.json")
        let rigBefore = try String(contentsOfFile: dir + "/pantilt.json", encoding: .utf8)
        for target in [program, dir + "/pantilt.json"] {
            let result = try RigProcess.run(["plan", program, "--format", "pto", "-o", target])
            #expect(result.status == 2)
            #expect(result.stderr == "error: -o \(target): is one of this run's input files; writing there would destroy it\n")
        }
        #expect(try String(contentsOfFile: dir + "/pantilt.json", encoding: .utf8) == rigBefore)
        let missing = try RigProcess.run(["plan", program, "--format", "pto", "-o", dir + "/no/such/dir/p.pto"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "error: -o \(dir)/no/such/dir/p.pto: the directory \(dir)/no/such/dir does not exist\n")
        // A bad option refuses the run before the (valid) output file is created.
        for (options, message) in [
            (["--names", "IMG_%s.JPG"], "error: --names \"IMG_%s.JPG\" has \"%s\", which is not an integer conversion"),
            (["--names", "IMG.JPG"], "error: --names \"IMG.JPG\" has no integer conversion"),
            (["--image-size", "6000"], "error: --image-size \"6000\" is not WIDTHxHEIGHT"),
            (["--hfov", "200"], "error: --hfov 200 is out of range"),
        ] {
            let out = dir + "/new.pto"
            let result = try RigProcess.run(["plan", program, "--format", "pto", "-o", out] + options)
            #expect(result.status == 2)
            #expect(result.stderr.hasPrefix(message), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test(.blocking) func aProgramWithoutALensNeedsHfovForStitcherFormats() throws {
        let refused = try RigProcess.run(["plan", "rigs/timelapse.json", "--format", "pto"])
        #expect(refused.status == 2)
        #expect(
            refused.stderr
                == "rigs/timelapse.json:5:11: error: $.kind: --format pto needs the lens's field of view: a timelapse program has no lens (only panorama programs do); give --hfov DEGREES (the horizontal field of view of the image as stored)\n"
        )
        let given = try RigProcess.run(["plan", "rigs/timelapse.json", "--format", "pto", "--hfov", "40", "--image-size", "4000x3000", "--names", "F%d.jpg"])
        #expect(given.status == 0, "\(given.stderr)")
        let images = given.stdout.split(separator: "\n").filter { $0.hasPrefix("i ") }
        #expect(images.count == 120)
        #expect(images.first == "i w4000 h3000 f0 v40 r0 p-10 y-60 n\"F1.jpg\"")
        #expect(images.last == "i w4000 h3000 f0 v=0 r0 p10 y60 n\"F120.jpg\"")
    }

    @Test(.blocking) func exportWritesTheLastTakesWithTheProgramsLens() throws {
        let (dir, program) = try Self.copyProgram("pano.json")
        let log = try Self.writeLog(in: dir, program: program)
        let out = dir + "/run.pto"
        let result = try RigProcess.run(["export", log, "--format", "pto", "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "wrote \(out): 3 images as pto (1 earlier take of redone steps left out)\n")
        let images = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("i ") }
        // The panorama's lens: 35 mm on 36 × 24, portrait → v = 2·atan(18/35), roll 90.
        let hfov = HuginNumber.text(2 * atan(18.0 / 35) * 180 / .pi)
        #expect(
            images == [
                "i w6000 h4000 f0 v\(hfov) r90 p-20 y-80 n\"IMG_0001.JPG\"",
                "i w6000 h4000 f0 v=0 r90 p-20 y-56.642857 n\"IMG_0003.JPG\"",
                "i w6000 h4000 f0 v=0 r90 p-20 y-34.285714 n\"IMG_0004.JPG\"",
            ])
        // The log's program is the copy, but its hash is not the log's: said, not refused.
        #expect(result.stderr.contains("has changed since the run"), "\(result.stderr)")
        // The log is an input too.
        let onto = try RigProcess.run(["export", log, "--format", "csv", "-o", log])
        #expect(onto.status == 2)
        #expect(onto.stderr.contains("error: -o \(log): is one of this run's input files"))
    }

    @Test(.blocking) func exportSaysWhenTheLensIsMissing() throws {
        let (dir, program) = try Self.copyProgram("pano.json")
        let log = try Self.writeLog(in: dir, program: nil)
        let refused = try RigProcess.run(["export", log, "--format", "papywizard"])
        #expect(refused.status == 2)
        #expect(
            refused.stderr.hasPrefix("\(log): error: --format papywizard needs the lens, and the log's program \"gone.json\" cannot be read ("),
            "\(refused.stderr)")
        #expect(refused.stderr.hasSuffix("give --program FILE (the program the log ran) or --hfov DEGREES\n"))
        // CSV needs no lens.
        let csv = try RigProcess.run(["export", log, "--format", "csv"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout.split(separator: "\n").count == 4)
        // Naming the program, or the field of view, gives it.
        let named = try RigProcess.run(["export", log, "--format", "papywizard", "--program", program])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stdout.contains("<focal>35.0</focal>"))
        #expect(named.stdout.contains("<cameraOrientation>portrait</cameraOrientation>"))
        let hfov = try RigProcess.run(["export", log, "--format", "pto", "--hfov", "50"])
        #expect(hfov.status == 0 && hfov.stdout.contains(" v50 r0 p-20 y-80 "), "\(hfov.stderr)")
        // No format, no file to infer it from.
        let none = try RigProcess.run(["export", log])
        #expect(none.status == 2)
        #expect(none.stderr.hasPrefix("error: give --format (pto, papywizard, csv, json, xmp)"), "\(none.stderr)")
    }
}

/// `rig play` shoots a small panorama on the simulated camera, then `rig export` hands
/// its shot log on: the images are the poses the log says were sent, in its order.
@Suite struct PlayThenExportTests {
    static let program = #"""
        {"rig": {"axes": [{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}],
                 "camera": {"type": "sim", "focusMs": 20, "shutterMs": 20, "afterShotMs": 20}},
         "kind": "panorama", "trigger": "auto", "settleSeconds": 0.1, "shoot": {"shotsPerStep": 2},
         "panorama": {"lens": {"horizontalFovDeg": 60, "verticalFovDeg": 40}, "overlapPercent": 30, "pan": [-20, 20], "tilt": [0, 20]}}
        """#

    @Test(.blocking) func theExportedProjectHasThePosesOfTheLog() throws {
        let programPath = try RigProcess.temporaryFile("small.json", contents: Self.program)
        let dir = (programPath as NSString).deletingLastPathComponent
        let logPath = dir + "/run.jsonl"
        let play = try RigProcess.run(["play", programPath, "--log", logPath, "--no-realtime", "--speed", "5"])
        #expect(play.status == 0, "\(play.stderr)")
        let log = try ShotLog(text: String(contentsOfFile: logPath, encoding: .utf8), file: logPath)
        // Two rows of two shots, two frames each.
        #expect(log.shots.count == 8)

        let pto = dir + "/small.pto"
        let export = try RigProcess.run(["export", logPath, "-o", pto, "--names", "P%03d.JPG"])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(!export.stderr.contains("changed since the run"))
        let images = try String(contentsOfFile: pto, encoding: .utf8).split(separator: "\n").filter { $0.hasPrefix("i ") }
        #expect(images.count == 8)
        for (k, (line, shot)) in zip(images, log.shots).enumerated() {
            let expected = "r0 p\(HuginNumber.text(shot.value(of: "tilt") ?? .nan)) y\(HuginNumber.text(shot.value(of: "pan") ?? .nan))"
            // A stack's first image numbers it; the second links to the first (Hugin's j=N).
            let stack = k % 2 == 0 ? "j\(k / 2)" : "j=\(k - 1)"
            #expect(line.contains(" \(expected) \(stack) n\"P\(String(format: "%03d", k + 1)).JPG\""), "\(line)")
        }
        let papywizard = try RigProcess.run(["export", logPath, "--format", "papywizard"])
        #expect(papywizard.status == 0, "\(papywizard.stderr)")
        #expect(papywizard.stdout.contains("<bracketing nbPicts=\"2\"/>"))
        #expect(papywizard.stdout.contains("<startTime>"))
        #expect(papywizard.stdout.components(separatedBy: "<time>").count - 1 == 8)
    }
}

/// The decimal form the Hugin writer uses (at most 6 decimals, no trailing zeros),
/// written apart from it for the expected lines.
enum HuginNumber {
    static func text(_ value: Double) -> String {
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}

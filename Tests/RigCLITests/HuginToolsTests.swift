import Foundation
import RigCore
import RigFormat
import RigTestSupport
import Testing

/// Hugin's own command-line tools (Debian's `hugin-tools`, installed by `scripts/setup
/// --test`) read the files `rig` writes: they load, give back the angles written, and
/// `pano_trafo` puts each image's centre where yaw right / pitch up say it belongs.
enum Hugin {
    static func path(_ tool: String) -> String? {
        ["/usr/bin", "/usr/local/bin"].map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static let installed = ["checkpto", "pto_var", "pano_trafo"].allSatisfy { path($0) != nil }
    static let missing = "hugin-tools is not installed (checkpto, pto_var, pano_trafo): run scripts/setup --test, or apt-get install hugin-tools"

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(_ tool: String, _ arguments: [String], input: String = "") throws -> Output {
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: path(tool) ?? tool)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let err = PipeCollector(stderr)
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        err.waitForEnd()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: err.text)
    }

    /// One image as Hugin wrote it back: size, field of view (linked lenses resolved) and angles.
    struct Image: Equatable {
        var w: Double
        var h: Double
        var v: Double
        var y: Double
        var p: Double
        var r: Double
    }

    /// The `p` line's height in degrees: its pixel height over its pixels per degree.
    static func panoramaVfov(_ pto: String) throws -> Double? {
        let text = try String(contentsOfFile: pto, encoding: .utf8)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("p ") }) else { return nil }
        let fields = line.split(separator: " ")
        func number(_ key: Character) -> Double? { fields.first { $0.first == key }.flatMap { Double($0.dropFirst()) } }
        guard let w = number("w"), let h = number("h"), let v = number("v") else { return nil }
        return h / (w / v)
    }

    /// The `i` lines of a project that Hugin's `pto_var` loaded and wrote again.
    static func reloaded(_ pto: String) throws -> (images: [Image], panorama: (w: Double, h: Double, v: Double)) {
        let out = pto + ".reloaded.pto"
        let result = try run("pto_var", ["--opt", "y,p,r", "-o", out, pto])
        #expect(result.status == 0, "pto_var: \(result.stderr)")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        func values(_ line: Substring) -> [String: String] {
            var map: [String: String] = [:]
            for token in line.split(separator: " ").dropFirst() {
                guard let key = token.first, key.isLowercase, "wvyprh".contains(key) else { continue }
                map[String(key)] = String(token.dropFirst())
            }
            return map
        }
        var images: [Image] = []
        for line in lines where line.hasPrefix("i ") {
            let m = values(line)
            let v = m["v"].flatMap { $0.hasPrefix("=") ? images.first?.v : Double($0) } ?? .nan
            images.append(
                Image(
                    w: Double(m["w"] ?? "") ?? .nan, h: Double(m["h"] ?? "") ?? .nan, v: v,
                    y: Double(m["y"] ?? "") ?? .nan, p: Double(m["p"] ?? "") ?? .nan, r: Double(m["r"] ?? "") ?? .nan))
        }
        let p = try #require(lines.first { $0.hasPrefix("p ") }.map(values))
        return (images, (Double(p["w"] ?? "") ?? .nan, Double(p["h"] ?? "") ?? .nan, Double(p["v"] ?? "") ?? .nan))
    }
}

@Suite(.enabled(if: Hugin.installed, Comment(rawValue: Hugin.missing)))
struct HuginToolsTests {
    func loadProgram(_ relative: String) throws -> Program {
        let path = RigProcess.packageRoot.appendingPathComponent(relative).path
        return try ProgramParser.parse(text: String(contentsOfFile: path, encoding: .utf8), file: relative) { rigPath, _ throws(FileError) in
            let full = RigProcess.packageRoot.appendingPathComponent("rigs").appendingPathComponent(rigPath).path
            guard let text = try? String(contentsOfFile: full, encoding: .utf8) else {
                throw FileError(file: full, location: SourceLocation(line: 1, column: 1), path: "$", message: "missing")
            }
            return (text, full)
        }
    }

    @Test(.blocking) func aPlannedPanoramaLoadsAndGivesBackItsAngles() throws {
        let program = try loadProgram("rigs/pano.json")
        let pto = try RigProcess.temporaryFile("pano.pto")
        let plan = try RigProcess.run(["plan", "rigs/pano.json", "--format", "pto", "-o", pto])
        #expect(plan.status == 0, "\(plan.stderr)")

        // checkpto loads it: every shot an image, one shared lens. (Its exit status counts
        // the unconnected image groups: a project without control points has one per image.)
        let check = try Hugin.run("checkpto", [pto])
        #expect(check.status != 255, "\(check.stderr)")
        #expect(check.stdout.contains("Project contains\n\(program.steps.count) images\n1 lenses\n"), "\(check.stdout)")

        let (images, _) = try Hugin.reloaded(pto)
        #expect(images.count == program.steps.count)
        // The lens: 35 mm on a 36 mm wide sensor, turned to portrait (roll 90).
        let hfov = 2 * atan(18.0 / 35) * 180 / .pi
        for (image, step) in zip(images, program.steps) {
            #expect(abs(image.v - hfov) < 1e-5)
            #expect(image.r == 90)
            #expect(abs(image.y - step.pose[0]) < 1e-5, "\(step.label)")
            #expect(abs(image.p - step.pose[1]) < 1e-5, "\(step.label)")
        }
    }

    /// pano_trafo maps each image's centre pixel into the equirectangular panorama: x grows
    /// with yaw (right), y shrinks with pitch (up), both at the panorama's pixels per degree.
    @Test(.blocking) func imageCentresLandWhereYawRightAndPitchUpPutThem() throws {
        let program = try loadProgram("rigs/pano.json")
        let pto = try RigProcess.temporaryFile("signs.pto")
        #expect(try RigProcess.run(["plan", "rigs/pano.json", "-o", pto]).status == 0)
        let (images, panorama) = try Hugin.reloaded(pto)
        let input = images.enumerated().map { "\($0) \(($1.w - 1) / 2) \(($1.h - 1) / 2)" }.joined(separator: "\n") + "\n"
        let trafo = try Hugin.run("pano_trafo", [pto], input: input)
        #expect(trafo.status == 0, "\(trafo.stderr)")
        let points = trafo.stdout.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }
        #expect(points.count == program.steps.count)
        let perDegree = panorama.w / panorama.v
        for (point, step) in zip(points, program.steps) where point.count == 2 {
            let (pan, tilt) = (step.pose[0], step.pose[1])
            #expect(abs(point[0] - ((panorama.w - 1) / 2 + pan * perDegree)) < 1, "\(step.label): x")
            #expect(abs(point[1] - ((panorama.h - 1) / 2 - tilt * perDegree)) < 1, "\(step.label): y")
        }
        // And plainly: the rightmost pan is the rightmost picture, the highest tilt the highest.
        let right = try #require(program.steps.indices.max { program.steps[$0].pose[0] < program.steps[$1].pose[0] })
        let up = try #require(program.steps.indices.max { program.steps[$0].pose[1] < program.steps[$1].pose[1] })
        #expect(points[right][0] == points.map { $0[0] }.max())
        #expect(points[up][1] == points.map { $0[1] }.min())
    }

    /// A full sphere by area, with zenith and nadir shots (`rigs/pano-sphere.json`): Hugin
    /// loads every shot at its angles, the canvas is the whole sphere, and the zenith
    /// shot's centre lands on the canvas's top edge, the nadir's on its bottom edge.
    @Test(.blocking) func aSphereWithZenithAndNadirLoadsAndItsPolesAreAtTheCanvasEdges() throws {
        let program = try loadProgram("rigs/pano-sphere.json")
        let pto = try RigProcess.temporaryFile("sphere.pto")
        let plan = try RigProcess.run(["plan", "rigs/pano-sphere.json", "-o", pto])
        #expect(plan.status == 0, "\(plan.stderr)")
        let check = try Hugin.run("checkpto", [pto])
        #expect(check.stdout.contains("Project contains\n\(program.steps.count) images\n1 lenses\n"), "\(check.stdout)")
        let (images, panorama) = try Hugin.reloaded(pto)
        #expect(images.count == program.steps.count)
        for (image, step) in zip(images, program.steps) {
            #expect(abs(image.p - step.pose[1]) < 1e-5, "\(step.label)")
        }
        #expect(panorama.v == 360)
        let vfov = try #require(try Hugin.panoramaVfov(pto))
        #expect(abs(vfov - 180) < 1e-6)
        let poles = program.steps.indices.filter { abs(program.steps[$0].pose[1]) == 90 }
        #expect(poles.count == 2)
        let input = poles.map { "\($0) \((images[$0].w - 1) / 2) \((images[$0].h - 1) / 2)" }.joined(separator: "\n") + "\n"
        let trafo = try Hugin.run("pano_trafo", [pto], input: input)
        #expect(trafo.status == 0, "\(trafo.stderr)")
        let ys = trafo.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").compactMap { Double($0) }.last }
        let height = panorama.w / panorama.v * vfov
        for (index, y) in zip(poles, ys) {
            let expected = program.steps[index].pose[1] > 0 ? 0 : height
            #expect(abs(y - expected) < 2, "\(program.steps[index].label): y \(y), expected \(expected)")
        }
    }

    /// Every image's corners land on the panorama's canvas (pano_trafo maps them): the
    /// top row's outer corners, tilted up, reach further in yaw than its centres.
    @Test(.blocking) func everyImagesCornersAreOnTheCanvas() throws {
        let pto = try RigProcess.temporaryFile("corners.pto")
        #expect(try RigProcess.run(["plan", "rigs/pano.json", "-o", pto]).status == 0)
        let (images, panorama) = try Hugin.reloaded(pto)
        let vfov = try #require(try Hugin.panoramaVfov(pto))
        let height = panorama.w / panorama.v * vfov
        var input = ""
        for (index, image) in images.enumerated() {
            for (x, y) in [(0, 0), (image.w - 1, 0), (0, image.h - 1), (image.w - 1, image.h - 1)] { input += "\(index) \(x) \(y)\n" }
        }
        let trafo = try Hugin.run("pano_trafo", [pto], input: input)
        #expect(trafo.status == 0, "\(trafo.stderr)")
        let points = trafo.stdout.split(separator: "\n").map { $0.split(separator: " ").compactMap { Double($0) } }
        #expect(points.count == images.count * 4)
        for point in points where point.count == 2 {
            #expect(point[0] >= -1 && point[0] <= panorama.w, "x \(point[0]) outside 0…\(panorama.w)")
            #expect(point[1] >= -1 && point[1] <= height, "y \(point[1]) outside 0…\(height)")
        }
        // And the canvas is not much wider than that: some corner comes within 2 % of each side.
        let xs = points.compactMap(\.first)
        #expect((xs.min() ?? .infinity) < panorama.w * 0.02 && (xs.max() ?? 0) > panorama.w * 0.98)
    }

    /// A program shooting 3 brackets per position: Hugin counts one stack per position.
    @Test(.blocking) func bracketsAreOneStackPerPositionForHugin() throws {
        let (dir, program) = try StitchCommandTests.copyProgram("pano.json")
        var text = try String(contentsOfFile: program, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"settleSeconds\": 0.5,", with: "\"settleSeconds\": 0.5, \"shoot\": {\"shotsPerStep\": 3},")
        try text.write(toFile: program, atomically: true, encoding: .utf8)
        let pto = dir + "/brackets.pto"
        let plan = try RigProcess.run(["plan", program, "-o", pto])
        #expect(plan.status == 0, "\(plan.stderr)")
        let check = try Hugin.run("checkpto", [pto])
        #expect(check.stdout.contains("Project contains\n69 images\n1 lenses\n23 stacks\n"), "\(check.stdout)")
    }

    @Test(.blocking) func anExportedShotLogGivesBackThePosesSent() throws {
        let (dir, program) = try StitchCommandTests.copyProgram("pano.json")
        let log = try StitchCommandTests.writeLog(in: dir, program: program)
        let pto = dir + "/run.pto"
        let export = try RigProcess.run(["export", log, "-o", pto])
        #expect(export.status == 0, "\(export.stderr)")
        let check = try Hugin.run("checkpto", [pto])
        #expect(check.stdout.contains("Project contains\n3 images\n1 lenses\n"), "\(check.stdout)")
        let (images, _) = try Hugin.reloaded(pto)
        // Step 1, step 2's second take, step 3.
        #expect(images.map(\.y).enumerated().allSatisfy { abs($1 - [-80, -56.642857142857146, -34.285714285714285][$0]) < 1e-5 })
        #expect(images.allSatisfy { $0.p == -20 && $0.r == 90 })
    }
}

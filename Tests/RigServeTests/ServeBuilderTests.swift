import Foundation
import RigCore
import RigFormat
import RigTestSupport
import Testing

extension ServeProcessTests {
    /// The page's builder in chromium (`serve_builder.py`): a panorama from two jogged
    /// corners and a timelapse from two jogged poses, saved through `POST /api/programs`.
    /// Each saved file parses to the same program as the hand-written file with the values
    /// the page showed, `rig check` reads it, and it is laid out as the project's JSON
    /// writer lays it out (a saved program round-trips exactly).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver"), "install chromium chromium-driver (scripts/setup --test)"))
    func thePageBuildsAPanoramaAndATimelapseFromJoggedPoses() async throws {
        let server = try await ServeProcess(rig: ServeSamples.rig, programs: ["steps.json": ServeSamples.autoSteps])
        defer { server.stop() }
        let script = TestTools.packageRoot.appendingPathComponent("Tests/RigServeTests/serve_builder.py").path
        let result = try await runTool("python3", [script, server.baseURL], in: server.directory, limit: .seconds(240))
        #expect(result.status == 0, "\(result.output.suffix(4000))\n--- server:\n\(server.log.suffix(2000))")
        guard result.status == 0 else { return }
        let last = try #require(result.output.split(separator: "\n").last { $0.hasPrefix("{") })
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: [String: Any]])
        let programs = server.directory.appendingPathComponent("programs")
        let rigPath = server.directory.appendingPathComponent("rig.json").standardizedFileURL.path

        func pose(_ value: Any?) throws -> (pan: Double, tilt: Double) {
            let pose = try #require(value as? [String: Double])
            return (try #require(pose["pan"]), try #require(pose["tilt"]))
        }
        func number(_ x: Double) -> String { JSONText.number(x) }

        // The panorama: the corners the page marked, the lens picked on it.
        let pano = try #require(shown["panorama"])
        let (a, b) = (try pose(pano["corner1"]), try pose(pano["corner2"]))
        let handPano = """
            {"rig": \(JSONText.string(rigPath)), "kind": "panorama", "trigger": "auto",
             "panorama": {"lens": "aps-c-18mm", "overlapPercent": 30, "pan": [\(number(a.pan)), \(number(b.pan))], "tilt": [\(number(a.tilt)), \(number(b.tilt))]}}
            """
        let savedPano = try expectSame(saved: programs.appendingPathComponent("pano-built.json").path, handWritten: handPano)
        // What the page showed as it went is what the planner plans.
        let plan = try #require(savedPano.panorama)
        let summary = try #require(pano["summary"] as? String)
        #expect(summary.hasPrefix("\(plan.rows) rows × \(plan.shotsPerRow.max() ?? 0) columns · \(plan.shots.count) shots"), "\(summary)")

        // The timelapse: two keys at frames 0 and 59, 3 s apart.
        let keys = try #require(shown["timelapse"]?["keys"] as? [Any])
        #expect(keys.count == 2)
        let (k0, k1) = (try pose(keys.first), try pose(keys.last))
        let handTimelapse = """
            {"rig": \(JSONText.string(rigPath)), "kind": "timelapse", "trigger": "interval:3",
             "timelapse": {"frames": 60, "keyframes": {
               "pan": [{"frame": 0, "value": \(number(k0.pan))}, {"frame": 59, "value": \(number(k1.pan))}],
               "tilt": [{"frame": 0, "value": \(number(k0.tilt))}, {"frame": 59, "value": \(number(k1.tilt))}]}}}
            """
        let savedTimelapse = try expectSame(saved: programs.appendingPathComponent("tl-built.json").path, handWritten: handTimelapse)
        #expect(savedTimelapse.steps.count == 60)
    }

    /// Parses the saved file and the hand-written text (both naming the same rig file) and
    /// expects the same program; `rig check` reads the saved file; writing the saved file's
    /// JSON again gives back its text.
    private func expectSame(saved path: String, handWritten: String) throws -> Program {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        func parse(_ text: String) throws -> Program {
            try ProgramParser.parse(text: text, file: "p.json") { rig, at throws(FileError) in
                guard let rigText = try? String(contentsOfFile: rig, encoding: .utf8) else { throw at.error("cannot read \(rig)") }
                return (rigText, rig)
            }
        }
        let saved = try parse(text)
        #expect(saved == (try parse(handWritten)), "\(text)")
        #expect(JSONText.document(try JSONParser.parse(text)) == text)
        let check = try RigProcess.run(["check", path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        return saved
    }
}

import Foundation
import RigCore
import RigFormat
import RigSky
import RigTestSupport
import Testing

/// `rig play` of a program with a `"start"` (issue 32): it waits with nothing moved, a
/// signal during the wait ends it cleanly, a past start is refused (or played at once
/// with `--start-now`). Every wait here is on an output line, bounded; no fixed sleep.
@Suite(.serialized) struct StartWaitTests {
    /// A short steps program on the simulated pan/tilt head, starting `secondsAhead` from now.
    static func program(secondsAhead: Double) throws -> String {
        let start = Date().addingTimeInterval(secondsAhead)
        let formatter = ISO8601DateFormatter()
        let rig = RigProcess.packageRoot.appendingPathComponent("rigs/pantilt.json").path
        return try RigProcess.temporaryFile(
            "start.json",
            contents: """
                {"rig": "\(rig)", "kind": "steps", "trigger": "auto", "settleSeconds": 0,
                 "start": "\(formatter.string(from: start))",
                 "steps": [{"pose": {"pan": 5}}, {"pose": {"pan": 0}}]}
                """)
    }

    static func traceRows(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").filter { !$0.hasPrefix("time_s") }.count
    }

    @Test(.blocking, arguments: [SIGINT, SIGTERM])
    func aSignalDuringTheWaitEndsItWithNothingMoved(signo: Int32) throws {
        let file = try Self.program(secondsAhead: 120)
        let trace = try RigProcess.temporaryFile("wait.csv")
        let (process, out, err) = try RigProcess.start(["play", file, "--trace", trace, "--no-realtime"], environment: ["TZ": "UTC"])
        let stdout = PipeCollector(out)
        let stderr = PipeCollector(err)
        #expect(stdout.wait(for: "⏳ starts at "), "\(stdout.text)\(stderr.text)")
        #expect(stdout.text.contains("local ("), "\(stdout.text)")
        #expect(stdout.text.contains(", in 1 min 5") || stdout.text.contains(", in 2 min 00 s"), "\(stdout.text)")
        // Waiting: nothing sent to the rig, no header.
        #expect(!stdout.text.contains("▶ "), "\(stdout.text)")
        #expect(Self.traceRows(trace) == 0)
        kill(process.processIdentifier, signo)
        stdout.waitForEnd()
        stderr.waitForEnd()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(stderr.text)")
        #expect(stderr.text.contains("stopped by \(signo == SIGINT ? "SIGINT" : "SIGTERM") before anything moved"), "\(stderr.text)")
        #expect(Self.traceRows(trace) == 0, "the rig moved")
    }

    @Test(.blocking) func aNearStartIsWaitedForThenPlayed() throws {
        let file = try Self.program(secondsAhead: 3)
        let trace = try RigProcess.temporaryFile("start.csv")
        let (process, out, err) = try RigProcess.start(["play", file, "--trace", trace, "--no-realtime"])
        let stdout = PipeCollector(out)
        let stderr = PipeCollector(err)
        #expect(stdout.wait(for: "⏳ starts at "), "\(stdout.text)\(stderr.text)")
        let waiting = Self.traceRows(trace)
        stdout.waitForEnd()
        stderr.waitForEnd()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stderr.text)")
        #expect(waiting == 0)
        let text = stdout.text
        let started = try #require(text.range(of: "▶ start: "), "\(text)")
        let header = try #require(text.range(of: "▶ \(file)"), "\(text)")
        #expect(started.lowerBound < header.lowerBound)
        #expect(Self.traceRows(trace) > 0)
    }

    @Test(.blocking) func aPastStartIsRefusedUnlessStartNow() throws {
        let file = try Self.program(secondsAhead: -600)
        let refused = try RigProcess.run(["play", file, "--no-realtime"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("error: the program starts at "), "\(refused.stderr)")
        #expect(refused.stderr.contains(" ago: refusing to play (nothing moved); give a later \"start\", or --start-now"), "\(refused.stderr)")
        let now = try RigProcess.run(["play", file, "--no-realtime", "--start-now"])
        #expect(now.status == 0, "\(now.stderr)")
        #expect(!now.stdout.contains("⏳"))
    }
}

/// `rig plan` on the clock: the total, the start and end (local and UTC), and every Nth
/// frame's time, interval, sun altitude and exposure.
@Suite struct PlanClockTests {
    @Test(.blocking) func planPrintsTheShootOnTheClock() throws {
        let file = "Tests/Fixtures/clock-grail.json"
        let result = try RigProcess.run(["plan", file, "--all"], environment: ["TZ": "UTC"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let program = try ProgramParser.parse(
            text: String(contentsOfFile: RigProcess.packageRoot.appendingPathComponent(file).path, encoding: .utf8), file: file,
            loadRig: { path, at throws(FileError) in throw at.error(path) })
        let start = try #require(program.start)
        let clock = try #require(lines.first { $0.hasPrefix("clock: starts ") }, "\(result.stdout)")
        #expect(clock.contains("(sunset − 30 min; \(UTCTime.text(start.unix, dateToo: true)))"), "\(clock)")
        // The total is the check's, and the end is the start plus it.
        let total = try #require(lines.first { $0.contains(": shoot: 360 frames") })
        let duration = try #require(total.range(of: "takes about ").map { total[$0.upperBound...].prefix { $0 != ";" } })
        #expect(clock.hasSuffix("; total \(duration)"), "\(clock) / \(total)")
        #expect(total.contains("started at its start, \(StartWaitClock.hhmm(start.unix))"), "\(total)")
        // Every frame: its time from the ramped interval, and the sun's altitude then.
        let frames = try #require(program.frameClock(trigger: program.trigger, startUnix: start.unix))
        let rows = lines.drop { !$0.hasPrefix("frame  local") }.dropFirst().prefix { !$0.isEmpty }
        #expect(rows.count == 360)
        for (row, frame) in zip(rows, frames) {
            let fields = row.split(separator: " ", omittingEmptySubsequences: true)
            #expect(String(fields[2]) + " UTC" == UTCTime.text(frame.unix, dateToo: false))
            let altitude = Sky.position(of: .sun, at: frame.unix, site: try #require(program.site)).altitude
            #expect(String(fields[6]) == (altitude >= 0 ? "+" : "") + fixed(altitude, 2) + "°", "\(row)")
        }
        // 5 s at the start, 10 s from 30 min on; the sun sets during the shoot.
        #expect(rows.first?.contains("   5.0 s") == true)
        #expect(rows.last?.contains("  10.0 s") == true)
        #expect(rows.first?.contains("ISO 100 f/2.8") == true)
        let end = try #require(frames.last)
        #expect(try #require(end.sunAltitude) < 0)
        // A long shoot prints every Nth frame unless --all.
        let short = try RigProcess.run(["plan", file], environment: ["TZ": "UTC"])
        #expect(short.stdout.contains("(every 6 frames and the last; --all for each)"))
    }
}

enum StartWaitClock {
    /// "15:21" UTC.
    static func hhmm(_ unix: Double) -> String { String(UTCTime.text(unix, dateToo: false).prefix(5)) }
}

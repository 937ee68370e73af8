import Foundation
import RigCore
import RigTestSupport
import Testing

@testable import RigRuntime

/// A shot log cut by a power loss at any byte: the next run's writer starts on a clean
/// line (the torn part kept beside it), and the log then reads with every complete event
/// and the new one, so `--resume` and `rig export` both take it.
@Suite struct ShotLogWriterTests {
    static let events: [ShotLogEvent] = [
        .start(ShotLogStart(program: "pano.json", programSha256: String(repeating: "ab", count: 32), steps: 3, startAxisNames: ["pan"], startPose: [0])),
        .shot(ShotLogShot(step: 1, label: "1", axisNames: ["pan"], pose: [-20], startSeconds: 1.5, endSeconds: 1.8)),
        .shot(ShotLogShot(step: 2, label: "2", axisNames: ["pan"], pose: [0], startSeconds: 3.5, endSeconds: 3.8)),
    ]

    @Test func aLogCutAtEveryByteIsResumedOnACleanLine() throws {
        let full = Array(ShotLog(events: Self.events).text.utf8)
        let lineEnds = full.indices.filter { full[$0] == UInt8(ascii: "\n") }
        let directory = try TestTools.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let resumed = ShotLogEvent.start(ShotLogStart(program: "pano.json", programSha256: String(repeating: "ab", count: 32), steps: 3, fromStep: 3))
        for cut in 0...full.count {
            let path = directory.appendingPathComponent("cut-\(cut).jsonl").path
            try Data(full[0..<cut]).write(to: URL(fileURLWithPath: path))
            let complete = lineEnds.filter { $0 < cut }.count
            let expectTorn = cut > 0 && full[cut - 1] != UInt8(ascii: "\n")
            // Read as it was left, the log holds exactly the events the writer keeps: a line
            // cut just before its line break is torn for both, not a shot for one of them.
            let asLeft = try ShotLog(text: String(decoding: full[0..<cut], as: UTF8.self), file: path)
            #expect(asLeft.events == Array(Self.events[0..<complete]), "cut at \(cut)")
            #expect((asLeft.tornLastLine != nil) == expectTorn, "cut at \(cut)")
            let writer = try ShotLogWriter(path: path)
            try writer.append(resumed)
            try writer.close()
            #expect((writer.tornLine != nil) == expectTorn, "cut at \(cut)")
            let text = try String(contentsOfFile: path, encoding: .utf8)
            if complete == 0 {
                // Nothing complete was there: the new run's start is the whole log.
                #expect(try ShotLog(text: text, file: path).events == [resumed], "cut at \(cut)")
            } else {
                let read = try ShotLog(text: text, file: path)
                #expect(read.events == Array(Self.events[0..<complete]) + [resumed], "cut at \(cut)")
                #expect(read.tornLastLine == nil)
            }
            if expectTorn {
                let kept = try String(contentsOfFile: path + ".torn", encoding: .utf8)
                let start = (lineEnds.last { $0 < cut } ?? -1) + 1
                #expect(kept == String(decoding: full[start..<cut], as: UTF8.self) + "\n", "cut at \(cut)")
            }
        }
    }
}

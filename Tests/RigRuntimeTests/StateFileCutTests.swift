import Foundation
import RigCore
import Testing

@testable import RigRuntime

/// The remembered pose cut short at any byte (a power loss on a filesystem that did not
/// keep the atomic rename's order, a copy cut off): the next run starts, says why the pose
/// is missing, and the next save writes a whole file again.
@Suite struct StateFileCutTests {
    @Test func aRememberedPoseCutAtEveryByteStillStartsAndSavesAgain() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-pose-\(UUID().uuidString)").path
        let path = dir + "/pose.json"
        let first = RememberedPose(filePath: path, channels: 4)
        first.record(channel: 0, .pulse(microseconds: 1200))
        first.record(channel: 2, .duty(percent: 40))
        try first.save()
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(RememberedPose(filePath: path, channels: 4).remembered(channel: 0) == .pulse(microseconds: 1200))

        for cut in 0..<whole.count {
            try Data(whole[0..<cut]).write(to: URL(fileURLWithPath: path))
            let pose = RememberedPose(filePath: path, channels: 4)
            #expect(pose.remembered(channel: 0) == nil, "cut at \(cut)")
            #expect(pose.loadProblem?.contains("unreadable") == true, "cut at \(cut)")
            pose.record(channel: 1, .pulse(microseconds: 1700))
            try pose.save()
            let again = RememberedPose(filePath: path, channels: 4)
            #expect(again.loadProblem == nil && again.remembered(channel: 1) == .pulse(microseconds: 1700), "cut at \(cut)")
        }
    }

    /// A value JSON cannot hold is not remembered; the last good one stays in the file.
    @Test func aNonFinitePositionKeepsTheLastGoodOne() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-pose-\(UUID().uuidString)").path
        let path = dir + "/pose.json"
        let pose = RememberedPose(filePath: path, channels: 2)
        pose.record(channel: 0, .pulse(microseconds: 1300))
        try pose.save()
        let next = RememberedPose(filePath: path, channels: 2)
        next.record(channel: 0, .pulse(microseconds: .nan))
        next.record(channel: 1, .pulse(microseconds: 1600))
        try next.save()
        let read = RememberedPose(filePath: path, channels: 2)
        #expect(read.remembered(channel: 0) == .pulse(microseconds: 1300))
        #expect(read.remembered(channel: 1) == .pulse(microseconds: 1600))
        #expect(read.loadProblem == nil)
    }
}

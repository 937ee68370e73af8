import Foundation
import Testing

@testable import RigServe

/// `poses.json` cut short at any byte: the server still starts (a warning names the file
/// moved aside whole, so no pose in it is lost), and saving works again.
@Suite struct PoseBookTests {
    @Test func aPosesFileCutAtEveryByteIsMovedAsideAndTheServerStarts() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-poses-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let book = try PoseBook(directory: dir)
        try book.save("sunset", pose: ["pan": 12, "tilt": 45])
        try book.save("door", pose: ["pan": -30, "tilt": 0])
        let path = dir + "/poses.json"
        let whole = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try PoseBook(directory: dir).loadWarning == nil)

        for cut in 0..<whole.count {
            try Data(whole[0..<cut]).write(to: URL(fileURLWithPath: path))
            let reopened = try PoseBook(directory: dir)
            // Only the trailing line break gone: still the whole document.
            if (try? JSONSerialization.jsonObject(with: Data(whole[0..<cut]))) != nil {
                #expect(reopened.loadWarning == nil && reopened.all.count == 2, "cut at \(cut)")
                continue
            }
            #expect(reopened.loadWarning?.contains("moved aside to \(path).damaged") == true, "cut at \(cut)")
            #expect(reopened.all.isEmpty)
            // The damaged file is kept whole beside it.
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: path + ".damaged"))) == Array(whole[0..<cut]))
            try reopened.save("again", pose: ["pan": 1])
            #expect(try PoseBook(directory: dir).pose(named: "again") == ["pan": 1])
        }
    }

    @Test func aPoseThatIsNotANumberIsRefusedAndChangesNothing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-poses-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let book = try PoseBook(directory: dir)
        try book.save("sunset", pose: ["pan": 12])
        #expect(throws: ServeError.self) { try book.save("sunset", pose: ["pan": .nan]) }
        #expect(book.pose(named: "sunset") == ["pan": 12])
        #expect(try PoseBook(directory: dir).pose(named: "sunset") == ["pan": 12])
    }
}

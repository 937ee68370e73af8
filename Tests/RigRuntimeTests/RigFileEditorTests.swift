import Foundation
import RigCore
import RigRuntime
import Testing

@Suite struct RigFileEditorTests {
    func file(_ text: String) throws -> String {
        let directory = NSTemporaryDirectory() + "rig-edit-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/rig.json"
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    let table = try! Calibration.make(points: [(-80, 620), (0, 1480), (85, 2400)], inverted: false).get()

    @Test func anAxisWithoutCalibrationGetsItAfterItsChannel() throws {
        let text = "{\"axes\": [{\"name\": \"pan\",\n  \"channel\": 2,\n  \"home\": 0}]}\n"
        let path = try file(text)
        let rig = try RigFileEditor.setCalibration(table, axis: "pan", in: path)
        #expect(rig.axes[0].calibration == table)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == "{\"axes\": [{\"name\": \"pan\",\n  \"channel\": 2,\n  \"calibration\": [[-80, 620], [0, 1480], [85, 2400]],\n  \"home\": 0}]}\n")
    }

    @Test func aShaperGoesAfterThePayloadOrReplacesTheOneThere() throws {
        let text = "{\"axes\": [{\"name\": \"pan\", \"channel\": 0,\n  \"payload\": {\"frequencyHz\": 3},\n  \"home\": 0}]}\n"
        let path = try file(text)
        let shaper = ShaperConfig(kind: .zv, frequencyHz: 2.987, damping: 0.031)
        let rig = try RigFileEditor.setShaper(shaper, axis: "pan", in: path)
        #expect(rig.axes[0].shaper == shaper)
        let once = try String(contentsOfFile: path, encoding: .utf8)
        #expect(
            once
                == "{\"axes\": [{\"name\": \"pan\", \"channel\": 0,\n  \"payload\": {\"frequencyHz\": 3},\n  \"shaper\": {\"type\": \"zv\", \"frequencyHz\": 2.987, \"damping\": 0.031},\n  \"home\": 0}]}\n"
        )
        let again = ShaperConfig(kind: .zv, frequencyHz: 3.01, damping: 0.02)
        try RigFileEditor.setShaper(again, axis: "pan", in: path)
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == once.replacingOccurrences(of: "\"frequencyHz\": 2.987, \"damping\": 0.031", with: "\"frequencyHz\": 3.01, \"damping\": 0.02"))
    }

    @Test func anInvertedAxisGetsTheTableMirroredSoItReadsBackAsMeasured() throws {
        let path = try file("{\"axes\": [{\"name\": \"tilt\", \"channel\": 1, \"calibration\": [[-90, 1000], [90, 2000]], \"inverted\": true}]}")
        let rig = try RigFileEditor.setCalibration(table, axis: "tilt", in: path)
        #expect(rig.axes[0].calibration == table)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\"calibration\": [[-80, 2400], [0, 1540], [85, 620]]"))
    }

    @Test func aTableTheRigWouldRefuseLeavesTheFileAsItWas() throws {
        let text = "{\"axes\": [{\"name\": \"pan\", \"channel\": 0, \"softLimits\": [-90, 90]}]}"
        let path = try file(text)
        #expect(throws: RigFileEditError.self) { try RigFileEditor.setCalibration(table, axis: "pan", in: path) }
        do {
            try RigFileEditor.setCalibration(table, axis: "pan", in: path)
        } catch {
            #expect(error.description.hasPrefix("\(path):1:"), "\(error)")
            #expect(error.description.contains("softLimits"), "\(error)")
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == text)
        #expect(throws: RigFileEditError.self) { try RigFileEditor.setCalibration(table, axis: "tilt", in: path) }
    }

    @Test func throughASymbolicLinkTheFileItNamesKeepsItsMode() throws {
        let target = try file("{\"axes\": [{\"name\": \"pan\", \"channel\": 0}]}")
        #expect(chmod(target, 0o600) == 0)
        let link = target + ".link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        try RigFileEditor.setCalibration(table, axis: "pan", in: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try String(contentsOfFile: target, encoding: .utf8).contains("\"calibration\""))
        var info = stat()
        #expect(stat(target, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}

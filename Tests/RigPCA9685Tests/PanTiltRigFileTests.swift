import Foundation
import RigCore
import RigPCA9685
import Testing

@Suite struct PanTiltRigFileTests {
    @Test func theExampleRigParses() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("rigs/pantilt-pca9685.json").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let rig = try RigParser.parse(text: text, file: "rigs/pantilt-pca9685.json")
        #expect(rig.axes.map(\.name) == ["pan", "tilt"])
        #expect(rig.axes.map(\.channel) == [0, 1])
        #expect(rig.output.type == PCA9685OutputConfig.type)
        let config = try PCA9685OutputConfig.parse(rig.output, axes: rig.axes)
        #expect(config.address == 0x40)
        #expect(config.bus == "/dev/i2c-1")
        #expect(config.frequencyHz == 50)
        #expect(config.oscillatorHz == 25_000_000)
    }
}

import Foundation
import RigTestSupport
import Testing

/// `rig camera preview -o FILE`: one live-view frame saved, a "sim" camera's test scene or
/// a gphoto2 camera's own; a camera without live view (libgphoto2's virtual camera) is
/// exit 1 with the one line.
@Suite struct CameraPreviewTests {
    @Test(.blocking) func aSimCameraSavesOneStampedJPEG() throws {
        let dir = try TestTools.temporaryDirectory()
        let rig = dir.appendingPathComponent("rig.json").path
        let axes = #"[{"name": "pan", "channel": 0}, {"name": "tilt", "channel": 1}]"#
        try #"{"name": "t", "axes": \#(axes), "camera": {"type": "sim", "preview": {"width": 120, "height": 80}}}"#
            .write(toFile: rig, atomically: true, encoding: .utf8)
        let out = dir.appendingPathComponent("frame.jpg").path
        let result = try RigProcess.run(["camera", "preview", "--rig", rig, "-o", out])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("frame.jpg (120×80)"))
        let bytes = try #require(FileManager.default.contents(atPath: out))
        #expect(bytes.prefix(2) == Data([0xFF, 0xD8]) && bytes.suffix(2) == Data([0xFF, 0xD9]), "a whole JPEG")
        #expect(String(decoding: bytes.prefix(200), as: UTF8.self).contains("rig-frame 1 captured-ns "))

        // A "sim" camera without "preview" has none: said in one line.
        try #"{"name": "t", "axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim"}}"#.write(toFile: rig, atomically: true, encoding: .utf8)
        let none = try RigProcess.run(["camera", "preview", "--rig", rig, "-o", dir.appendingPathComponent("none.jpg").path])
        #expect(none.status == 1)
        #expect(none.stderr.contains("this camera has no live view"))
        // A bad key in "preview" is a file error at its place.
        try #"{"name": "t", "axes": [{"name": "pan", "channel": 0}], "camera": {"type": "sim", "preview": {"fps": 500}}}"#
            .write(toFile: rig, atomically: true, encoding: .utf8)
        let bad = try RigProcess.run(["camera", "preview", "--rig", rig])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("error: ") && bad.stderr.contains("500 frames/s is out of range"), "\(bad.stderr)")
    }

    @Test(.enabled(if: VirtualCamera.available, Comment(rawValue: VirtualCamera.missing)))
    func theVirtualCameraHasNoLiveViewAndSaysSo() throws {
        let dir = try TestTools.temporaryDirectory()
        let out = dir.appendingPathComponent("frame.jpg").path
        let result = try RigProcess.run(["camera", "preview", "-o", out], environment: VirtualCamera.environment(pictures: try VirtualCamera.pictures()))
        #expect(result.status == 1)
        #expect(result.stderr.contains("error: this camera has no live view"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}

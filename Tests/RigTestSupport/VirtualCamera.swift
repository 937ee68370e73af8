import Foundation

/// libgphoto2's virtual camera (a Nikon D750 on `usb:001,001`, emulated over a virtual USB
/// port), from the libgphoto2 that the PyPI `gphoto2` wheel carries (Debian's is built
/// without it). `scripts/setup --test` installs the wheel into .build-venv/; a `rig`
/// process started with `environment(pictures:)` loads that libgphoto2 and sees the camera,
/// which "takes" the JPEGs in `pictures`.
public enum VirtualCamera {
    /// The wheel's package folder, if it is installed.
    public static let package: URL? = {
        let lib = TestTools.venv.appendingPathComponent("lib")
        guard let pythons = try? FileManager.default.contentsOfDirectory(atPath: lib.path) else { return nil }
        for python in pythons.sorted() where python.hasPrefix("python3") {
            let candidate = lib.appendingPathComponent(python).appendingPathComponent("site-packages/gphoto2")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("libgphoto2/vusb").path) { return candidate }
        }
        return nil
    }()

    public static var available: Bool { package != nil }

    /// Why the camera tests did not run, said loudly where they are skipped.
    public static let missing =
        "SKIPPED: libgphoto2's virtual camera is not installed, so rig's gphoto2 camera code was NOT tested against a camera; \(TestTools.setupHint)"

    /// The environment for a `rig` process that talks to the virtual camera.
    public static func environment(pictures: URL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        guard let package else { return environment }
        let library = package.appendingPathComponent("libgphoto2")
        environment["LD_LIBRARY_PATH"] = library.path + ":" + package.deletingLastPathComponent().appendingPathComponent("gphoto2.libs").path
        environment["CAMLIBS"] = library.appendingPathComponent("camlibs").path
        environment["IOLIBS"] = library.appendingPathComponent("vusb").path
        environment["VCAMERADIR"] = pictures.path
        return environment
    }

    /// A folder holding one picture for the camera to "take", again and again: a JPEG from
    /// Tests/Fixtures/camera (`grey118.jpg`: 320×240 of sRGB 118, 18 % grey in linear
    /// light; `clipped.jpg`: a quarter black, a quarter white).
    public static func pictures(_ name: String = "grey118.jpg") throws -> URL {
        let dir = try TestTools.temporaryDirectory().appendingPathComponent("vcamera")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture(name), to: dir.appendingPathComponent(name))
        return dir
    }

    public static func fixture(_ name: String) -> URL {
        TestTools.packageRoot.appendingPathComponent("Tests/Fixtures/camera").appendingPathComponent(name)
    }

    /// The bytes of a fixture picture.
    public static func bytes(_ name: String = "grey118.jpg") -> Data? {
        FileManager.default.contents(atPath: fixture(name).path)
    }
}

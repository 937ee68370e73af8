import FoundationEssentials
import Glibc
import RigSky

/// A frame's exposure value from the camera settings it was taken with, as Hugin computes
/// its `Eev` from EXIF: log2(N² / t) − log2(ISO / 100). A stitcher compares the frames'
/// values (a bracket's frames are one exposure step apart), so they must all be on one scale.
public enum ExposureValue {
    /// The names cameras give each exposure setting (gphoto2's, brand by brand), in the
    /// order they are tried.
    public static let settingNames: [CameraChoices.Setting: [String]] = [
        .shutter: ["shutterspeed", "shutterspeed2", "exposuretime", "exposureSeconds"],
        .aperture: ["f-number", "aperture"],
        .iso: ["iso", "isospeed"],
        .ev: ["exposurecompensation", "exposurecompensation2"],
    ]

    /// Each frame's exposure value, or nil for every frame when one frame's shutter speed
    /// is unknown. The aperture and ISO count only when every frame records them; else the
    /// values are relative (the aperture and ISO were the camera's own, the same for all).
    public static func values(of frames: [[CameraSetting]]) -> [Double?] {
        let shutters = frames.map { setting(.shutter, in: $0).flatMap(ShutterSpeed.seconds) }
        guard !frames.isEmpty, shutters.allSatisfy({ $0 != nil }) else { return frames.map { _ in nil } }
        let apertures = frames.map { setting(.aperture, in: $0).flatMap(Aperture.number) }
        let isos = frames.map { setting(.iso, in: $0).flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil } }
        let withAperture = apertures.allSatisfy { $0 != nil }
        let withISO = isos.allSatisfy { $0 != nil }
        return frames.indices.map { i in
            var ev = -log2(shutters[i] ?? 1)
            if withAperture, let n = apertures[i] { ev += 2 * log2(n) }
            if withISO, let iso = isos[i] { ev -= log2(iso / 100) }
            return ev
        }
    }

    /// The settings a frame was really made with, as the camera reported them (after it
    /// took the nearest of its own choices): nil unless it reports shutter, aperture and ISO.
    public static func made(_ settings: [CameraSetting]) -> ExposureSettings? {
        guard let shutter = setting(.shutter, in: settings).flatMap(ShutterSpeed.seconds),
            let aperture = setting(.aperture, in: settings).flatMap(Aperture.number),
            let iso = setting(.iso, in: settings).flatMap({ Double($0) }), iso > 0, iso.isFinite
        else { return nil }
        return ExposureSettings(shutterSeconds: shutter, iso: iso, aperture: aperture)
    }

    /// The value of `kind` among `settings`, under the first name a camera uses for it.
    public static func setting(_ kind: CameraChoices.Setting, in settings: [CameraSetting]) -> String? {
        for name in settingNames[kind] ?? [] {
            if let found = settings.first(where: { $0.name == name }) { return found.value }
        }
        return nil
    }
}

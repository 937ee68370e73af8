import RigCore
import RigFormat

/// A `"type": "gphoto2"` camera's own keys. Every one is optional: with none, the first
/// camera libgphoto2 finds.
public struct GPhoto2CameraConfig: Sendable, Equatable {
    public static let type = "gphoto2"

    public enum CaptureTarget: String, Sendable, Equatable, CaseIterable {
        /// The camera keeps every file on its card.
        case card
        /// The camera keeps the file in its memory until it is downloaded (needs `download`).
        case ram
    }

    /// The camera's model as libgphoto2 names it ("Canon EOS R6", "Nikon DSC D750").
    public var model: String?
    /// `usb:BUS,DEV` or `ptpip:ADDRESS` (a Wi-Fi camera).
    public var port: String?
    public var captureTarget: CaptureTarget?
    /// A folder each confirmed file is copied to, off the control loop's path.
    public var download: String?
    /// How long after the exposure the camera has to report the new file before the shot is
    /// tried again (once), then the run stops.
    public var confirmSeconds = 10.0

    public init() {}

    public static let confirmRange = 1.0...600

    public static func parse(_ camera: CameraConfig) throws(FileError) -> GPhoto2CameraConfig {
        let object = try camera.section.object(sharedKeys: CameraConfig.sharedKeys)
        var config = GPhoto2CameraConfig()
        if let m = object.optional("model") { config.model = try m.nonEmptyString() }
        if let p = object.optional("port") {
            let port = try p.nonEmptyString()
            guard port.hasPrefix("usb:") || port.hasPrefix("ptpip:") || port.hasPrefix("serial:") else {
                throw p.error("\"\(elided(port))\" is not a libgphoto2 port; valid: \"usb:BUS,DEV\" (rig camera list shows it) or \"ptpip:ADDRESS\"")
            }
            config.port = port
        }
        if let t = object.optional("captureTarget") {
            config.captureTarget = CaptureTarget(rawValue: try t.oneOf(CaptureTarget.allCases.map(\.rawValue)))
        }
        if let d = object.optional("download") { config.download = try d.nonEmptyString() }
        if config.captureTarget == .ram, config.download == nil {
            throw (object.optional("captureTarget") ?? camera.section.reader).error(
                "with \"captureTarget\": \"ram\" the file lives only until it is downloaded; give \"download\": \"DIR\" or use \"card\"")
        }
        if let c = object.optional("confirmSeconds") { config.confirmSeconds = try c.number(in: confirmRange, unit: "s") }
        try object.finish()
        return config
    }

    /// For messages: "gphoto2 Nikon DSC D750 on usb:001,004", "gphoto2 (first camera found)".
    public var label: String {
        switch (model, port) {
        case (let m?, let p?): "gphoto2 \(m) on \(p)"
        case (let m?, nil): "gphoto2 \(m)"
        case (nil, let p?): "gphoto2 on \(p)"
        case (nil, nil): "gphoto2 (first camera found)"
        }
    }
}

import RigFormat

/// The rig's camera (`"camera"` in a rig file). RigCore keeps only what every camera
/// shares: its `type` and the shot timing. The rest of the section belongs to the camera's
/// backend, which reads it from `section` in its own module (`GPIOCameraConfig` in
/// RigStepSync, `GPhoto2CameraConfig` in RigGPhoto2); the composition root lists the
/// backends so `rig check` validates every section before anything opens.
public struct CameraConfig: Sendable, Equatable {
    /// The backend's name (`"sim"`, `"gpio"`, `"gphoto2"`).
    public var type: String
    /// The whole `"camera"` object, with its place in the file.
    public var section: ConfigSection
    /// Half-press before the shutter: wakes the camera and lets it focus.
    public var focusSeconds = 0.2
    /// How long the shutter contact stays closed for a normal (not bulb) exposure.
    public var shutterSeconds = 0.15
    /// After the release, before the next shot: the camera writes its card. The rig may
    /// move meanwhile; it does not shoot again before this has passed.
    public var afterShotSeconds = 0.5

    /// The keys every camera section may hold; a backend reads the others.
    public static let sharedKeys = ["type", "focusMs", "shutterMs", "afterShotMs"]

    public init(type: String, section: ConfigSection? = nil) {
        self.type = type
        self.section = section ?? ConfigSection(object: ["type": type])
    }

    static func parse(_ value: ValueReader) throws(FileError) -> CameraConfig {
        let object = try value.object()
        let type = try object.required("type", "the camera's type, such as \"gpio\", \"gphoto2\" or \"sim\"").nonEmptyString()
        var config = CameraConfig(type: type, section: ConfigSection(value))
        if let ms = object.optional("focusMs") { config.focusSeconds = try ms.number(in: 0...10_000, unit: "ms") / 1000 }
        if let ms = object.optional("shutterMs") { config.shutterSeconds = try ms.number(in: 10...10_000, unit: "ms") / 1000 }
        if let ms = object.optional("afterShotMs") { config.afterShotSeconds = try ms.number(in: 0...600_000, unit: "ms") / 1000 }
        // The other keys are the backend's: it reads them and refuses unknown ones.
        return config
    }
}

/// A device's section of a rig file, kept whole for the module that owns the device: it
/// reads it with the same `FILE:LINE:COL` errors as the rest of the file.
public struct ConfigSection: Sendable, Equatable {
    public let node: JSONNode
    public let file: String
    public let path: String

    public init(_ value: ValueReader) {
        node = value.node
        file = value.context.file
        path = value.context.path
    }

    /// A section made in code (tests, defaults): an object of strings, at 1:1 of no file.
    public init(object: KeyValuePairs<String, String>, file: String = "<built-in>", path: String = "$.camera") {
        let at = SourceLocation(line: 1, column: 1)
        node = JSONNode(
            .object(object.map { JSONMember(name: JSONString($0.key), keyLocation: at, value: JSONNode(.string(JSONString($0.value)), at: at)) }), at: at)
        self.file = file
        self.path = path
    }

    public var reader: ValueReader { ValueReader(node, JSONContext(file: file, path: path)) }

    /// The section's object with `shared` keys already accounted for: the owner reads its
    /// own keys and calls `finish()`, which names any key nobody knows.
    public func object(sharedKeys shared: [String]) throws(FileError) -> ObjectReader {
        let object = try reader.object()
        object.allow(shared)
        return object
    }
}

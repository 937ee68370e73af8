import RigCore
import RigFormat

/// A `"type": "gpio"` camera's own keys: the libgpiod lines that close the camera's
/// remote-port contacts through optocouplers. The shot timing is the shared
/// `CameraConfig`'s.
public struct GPIOCameraConfig: Sendable, Equatable {
    public static let type = "gpio"
    public var chip = "gpiochip0"
    /// The line closing the shutter contact (2.5 mm jack tip).
    public var shutterLine = 27
    /// The line closing the focus contact (ring); nil: no focus line wired.
    public var focusLine: Int? = 22
    /// Line low = contact closed (true) or high (false: the usual optocoupler wiring).
    public var activeLow = false

    public init() {}

    public static let lineRange = 0...1023

    /// The lines the camera uses, for clash checks with the buttons.
    public var lines: [Int] { [shutterLine] + (focusLine.map { [$0] } ?? []) }

    /// Reads the section of a rig's `gpio` camera; `buttons`: the rig's buttons, whose
    /// lines the camera must not share.
    public static func parse(_ camera: CameraConfig, buttons: ButtonsConfig?) throws(FileError) -> GPIOCameraConfig {
        let object = try camera.section.object(sharedKeys: CameraConfig.sharedKeys)
        var config = GPIOCameraConfig()
        if let chip = object.optional("chip") { config.chip = try chip.nonEmptyString() }
        if let line = object.optional("shutterLine") { config.shutterLine = try line.integer(in: lineRange) }
        if let line = object.optional("focusLine") { config.focusLine = line.isNull() ? nil : try line.integer(in: lineRange) }
        if let low = object.optional("activeLow") { config.activeLow = try low.bool() }
        if let focus = config.focusLine, focus == config.shutterLine {
            if let given = object.optional("focusLine") {
                throw given.error("focusLine \(focus) is the shutter line too; the two contacts need their own lines")
            }
            throw (object.optional("shutterLine") ?? camera.section.reader).error(
                "line \(focus) is the focus line (focusLine's default); set \"focusLine\" to another line, or null if focus is not wired")
        }
        try object.finish()
        if let buttons {
            let taken = buttons.usedLines.map(\.line)
            if buttons.chip == config.chip, let clash = config.lines.first(where: taken.contains) {
                throw camera.section.reader.error("line \(clash) of \(config.chip) is already used by \"buttons\"; the camera needs lines of its own")
            }
        }
        return config
    }
}

/// The rig's camera trigger (`"camera"` in a rig file): GPIO lines that close the
/// camera's remote-port contacts through optocouplers, or a simulated camera that only
/// records shots. Timing defaults suit a typical camera in single-shot mode.
public struct CameraConfig: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// libgpiod output lines (`chip`, `shutterLine`, `focusLine`).
        case gpio
        /// No hardware: shots are recorded (tests, `--output sim` rehearsals).
        case sim
    }

    public var kind: Kind
    public var chip = "gpiochip0"
    /// The line closing the shutter contact (2.5 mm jack tip).
    public var shutterLine = 27
    /// The line closing the focus contact (ring); nil: no focus line wired.
    public var focusLine: Int? = 22
    /// Line low = contact closed (true) or high (false: the usual optocoupler wiring).
    public var activeLow = false
    /// Half-press before the shutter: wakes the camera and lets it focus.
    public var focusSeconds = 0.2
    /// How long the shutter contact stays closed for a normal (not bulb) exposure.
    public var shutterSeconds = 0.15
    /// After the release, before the next shot: the camera writes its card. The rig may
    /// move meanwhile; it does not shoot again before this has passed.
    public var afterShotSeconds = 0.5

    public init(kind: Kind) {
        self.kind = kind
    }

    public static let lineRange = 0...1023

    /// The lines the camera uses, for clash checks with the buttons.
    public var lines: [Int] { kind == .gpio ? [shutterLine] + (focusLine.map { [$0] } ?? []) : [] }

    static func parse(_ value: ValueReader) throws(FileError) -> CameraConfig {
        let object = try value.object()
        let typeValue = try object.required("type", "\"gpio\" or \"sim\"")
        let kind = Kind(rawValue: try typeValue.oneOf(Kind.allCases.map(\.rawValue))) ?? .sim
        var config = CameraConfig(kind: kind)
        let gpioKeys = ["chip", "shutterLine", "focusLine", "activeLow"]
        if kind == .gpio {
            if let chip = object.optional("chip") { config.chip = try chip.nonEmptyString() }
            if let line = object.optional("shutterLine") { config.shutterLine = try line.integer(in: lineRange) }
            if let line = object.optional("focusLine") { config.focusLine = line.isNull() ? nil : try line.integer(in: lineRange) }
            if let low = object.optional("activeLow") { config.activeLow = try low.bool() }
            if let focus = config.focusLine, focus == config.shutterLine {
                if let given = object.optional("focusLine") {
                    throw given.error("focusLine \(focus) is the shutter line too; the two contacts need their own lines")
                }
                throw (object.optional("shutterLine") ?? value).error(
                    "line \(focus) is the focus line (focusLine's default); set \"focusLine\" to another line, or null if focus is not wired")
            }
        } else if let key = gpioKeys.first(where: object.has), let v = object.optional(key) {
            throw v.error("\"\(key)\" is for a \"gpio\" camera; a \"sim\" camera has no lines")
        }
        if let ms = object.optional("focusMs") { config.focusSeconds = try ms.number(in: 0...10_000, unit: "ms") / 1000 }
        if let ms = object.optional("shutterMs") { config.shutterSeconds = try ms.number(in: 10...10_000, unit: "ms") / 1000 }
        if let ms = object.optional("afterShotMs") { config.afterShotSeconds = try ms.number(in: 0...600_000, unit: "ms") / 1000 }
        try object.finish()
        return config
    }
}

import RigCore
import RigFormat

/// Push buttons and LEDs on GPIO lines (`"buttons"` in a rig file). Defaults follow
/// Cascable's Raspberry Pi proof of concept: continue BCM 13, stop BCM 10 (pull-up,
/// pressed = low), continue LED BCM 21, stop LED BCM 7.
public struct ButtonsConfig: Sendable, Equatable {
    public var chip = "gpiochip0"
    public var continueLine = 13
    public var stopLine = 10
    /// LED lines; nil: no LED.
    public var continueLED: Int? = 21
    public var stopLED: Int? = 7
    /// Pressed = low, with the internal pull-up.
    public var activeLow = true
    public var debounceSeconds = 0.03

    /// Every line the buttons and LEDs use, with what it is for.
    public var usedLines: [(line: Int, what: String)] {
        [(continueLine, "continue button"), (stopLine, "stop button")] + (continueLED.map { [($0, "continue LED")] } ?? [])
            + (stopLED.map { [($0, "stop LED")] } ?? [])
    }

    public init() {}

    /// The rig's `"buttons"` section read here, beside the GPIO lines it names; nil when
    /// the rig has none (the defaults apply where buttons are used).
    public static func parse(_ section: ConfigSection?) throws(FileError) -> ButtonsConfig? {
        guard let section else { return nil }
        let object = try section.reader.object()
        var config = ButtonsConfig()
        if let chip = object.optional("chip") { config.chip = try chip.nonEmptyString() }
        if let line = object.optional("continueLine") { config.continueLine = try line.integer(in: 0...1023) }
        if let line = object.optional("stopLine") { config.stopLine = try line.integer(in: 0...1023) }
        for (key, keyPath) in [("continueLed", \ButtonsConfig.continueLED), ("stopLed", \ButtonsConfig.stopLED)] {
            guard let led = object.optional(key) else { continue }
            config[keyPath: keyPath] = led.isNull() ? nil : try led.integer(in: 0...1023)
        }
        if let low = object.optional("activeLow") { config.activeLow = try low.bool() }
        if let ms = object.optional("debounceMs") { config.debounceSeconds = try ms.number(in: 0...1000, unit: "ms") / 1000 }
        let lines = [config.continueLine, config.stopLine] + [config.continueLED, config.stopLED].compactMap { $0 }
        if Set(lines).count != lines.count {
            throw object.error("buttons and LEDs need distinct lines; found \(lines.map(String.init).joined(separator: ", "))")
        }
        try object.finish()
        return config
    }
}

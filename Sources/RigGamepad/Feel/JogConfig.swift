import RigCore
import RigFormat

/// How `rig jog` feels and which gamepad control does what: the rig file's optional
/// `"jog"` object. Controls are named as in SDL's GameControllerDB (`a`, `leftx`, …);
/// `a`/`b`/`x`/`y` are the bottom/right/left/top face buttons (Linux
/// `BTN_SOUTH`/`BTN_EAST`/`BTN_WEST`/`BTN_NORTH`, Documentation/input/gamepad.rst).
public struct JogConfig: Sendable, Equatable {
    /// A stick axis of the standard gamepad.
    public enum Stick: String, Sendable, CaseIterable {
        case leftx, lefty, rightx, righty
    }

    /// A button of the standard gamepad (the d-pad is not remappable: it nudges the
    /// axes of the left stick).
    public enum Button: String, Sendable, CaseIterable {
        case a, b, x, y, back, start, guide, leftshoulder, rightshoulder, leftstick, rightstick
    }

    /// What a button does.
    public enum Action: String, Sendable, CaseIterable {
        /// Append the current pose as a keyframe.
        case record
        /// Delete the last keyframe.
        case delete
        /// Move to the rig's home pose.
        case home
        /// Play the recorded program (any stick or button interrupts it).
        case preview
        /// Save the program file (it is also saved after every change) and quit.
        case save
        /// One speed level down (coarse → normal → fine).
        case slower
        /// One speed level up.
        case faster
        /// Stop jogging and end the session.
        case quit
        case none
    }

    /// Which rig axis a stick drives, and in which sense.
    public struct StickAssignment: Sendable, Equatable {
        public var axis: Int
        /// Reverses the stick. Sticks report "down" and "right" as positive; the standard
        /// layout inverts the Y sticks so that pushing up moves an axis up.
        public var inverted: Bool

        public init(axis: Int, inverted: Bool) {
            self.axis = axis
            self.inverted = inverted
        }
    }

    /// Radial deadzone as a fraction of the stick's travel (0…0.9).
    public var deadzone = 0.15
    /// Expo: 0 linear, 1 cubic; blends `x` and `x³` for fine control near the centre.
    public var expo = 0.5
    /// A stick pushed within this many degrees of its X or Y direction moves one axis
    /// only (0: off).
    public var axisSnapDegrees = 0.0
    /// Speed levels as fractions of each axis's maxVelocity.
    public var fineSpeed = 0.1
    public var normalSpeed = 0.4
    public var coarseSpeed = 1.0
    /// One d-pad press (or arrow key tap) moves this far, in the axis's unit.
    public var nudgeStep = 0.5
    /// No input for this long while moving stops the rig.
    public var watchdogMilliseconds = 500.0
    /// Seconds between recorded keyframes.
    public var spacingSeconds = 2.0
    public var sticks: [Stick: StickAssignment]
    public var buttons: [Button: Action]
    /// A GameControllerDB line for a pad that does not follow the Linux gamepad layout.
    public var sdlMapping: SDLMapping?

    public init(sticks: [Stick: StickAssignment], buttons: [Button: Action]) {
        self.sticks = sticks
        self.buttons = buttons
    }

    /// The standard layout for these axes: left stick "pan"/"tilt" (else the first two
    /// axes), right stick the next two; A record, B delete, X home, Y preview, Start
    /// save, left/right shoulder slower/faster.
    public static func standard(for axes: [Axis]) -> JogConfig {
        var order: [Int] = []
        for name in ["pan", "tilt"] {
            if let i = axes.firstIndex(where: { $0.name == name }) { order.append(i) }
        }
        if order.count < 2 { order = [] }
        for i in axes.indices where !order.contains(i) { order.append(i) }
        var sticks: [Stick: StickAssignment] = [:]
        for (stick, axis) in zip([Stick.leftx, .lefty, .rightx, .righty], order) {
            sticks[stick] = StickAssignment(axis: axis, inverted: stick == .lefty || stick == .righty)
        }
        let buttons: [Button: Action] = [
            .a: .record, .b: .delete, .x: .home, .y: .preview, .start: .save,
            .leftshoulder: .slower, .rightshoulder: .faster, .back: .quit,
        ]
        return JogConfig(sticks: sticks, buttons: buttons)
    }

    /// Speed levels, slowest first.
    public var speedLevels: [Double] { [fineSpeed, normalSpeed, coarseSpeed] }

    /// The rig's jog settings: its `"jog"` section over the standard layout. The section
    /// was read when the rig was loaded (`Devices.check`), so this does not fail then; a
    /// rig made in code without one gets the standard layout.
    public static func of(_ rig: Rig) -> JogConfig {
        (try? parse(rig.jog, axes: rig.axes)) ?? standard(for: rig.axes)
    }

    /// Reads the rig's `"jog"` section (the standard layout when it has none). `sticks` and
    /// `buttons` change the standard layout only where they name a control; `null`
    /// unassigns it.
    public static func parse(_ section: ConfigSection?, axes: [Axis]) throws(FileError) -> JogConfig {
        guard let section else { return standard(for: axes) }
        let value = section.reader
        let object = try value.object()
        var config = standard(for: axes)
        if let v = object.optional("deadzone") { config.deadzone = try v.number(in: 0...0.9) }
        if let v = object.optional("expo") { config.expo = try v.number(in: 0...1) }
        if let v = object.optional("axisSnapDeg") { config.axisSnapDegrees = try v.number(in: 0...45, unit: "°") }
        if let v = object.optional("fineSpeed") { config.fineSpeed = try v.number(in: 0.001...1) }
        if let v = object.optional("normalSpeed") { config.normalSpeed = try v.number(in: 0.001...1) }
        if let v = object.optional("coarseSpeed") { config.coarseSpeed = try v.number(in: 0.001...1) }
        guard config.fineSpeed <= config.normalSpeed, config.normalSpeed <= config.coarseSpeed else {
            throw object.error(
                "speeds must satisfy fineSpeed ≤ normalSpeed ≤ coarseSpeed; found \(format(config.fineSpeed)), \(format(config.normalSpeed)), \(format(config.coarseSpeed))"
            )
        }
        if let v = object.optional("nudgeStep") { config.nudgeStep = try v.number(in: 0.001...360) }
        if let v = object.optional("watchdogMs") { config.watchdogMilliseconds = try v.number(in: 50...5000, unit: "ms") }
        if let v = object.optional("spacingSeconds") { config.spacingSeconds = try v.number(in: 0.1...3600, unit: "s") }
        if let v = object.optional("sticks") {
            let sticks = try v.object()
            for stick in Stick.allCases {
                guard let s = sticks.optional(stick.rawValue) else { continue }
                if s.isNull() {
                    config.sticks[stick] = nil
                    continue
                }
                config.sticks[stick] = try parseStick(s, stick: stick, axes: axes)
            }
            try sticks.finish()
        }
        if let v = object.optional("buttons") {
            let buttons = try v.object()
            for button in Button.allCases {
                guard let b = buttons.optional(button.rawValue) else { continue }
                if b.isNull() {
                    config.buttons[button] = nil
                    continue
                }
                config.buttons[button] = Action(rawValue: try b.oneOf(Action.allCases.map(\.rawValue))) ?? JogConfig.Action.none
            }
            try buttons.finish()
        }
        if let v = object.optional("sdlMapping") {
            switch SDLMapping.parse(try v.nonEmptyString()) {
            case .success(let mapping): config.sdlMapping = mapping
            case .failure(let problem): throw v.error("not an SDL GameControllerDB mapping: \(problem.message)")
            }
        }
        try object.finish()
        return config
    }

    /// `"pan"` or `{"axis": "pan", "inverted": true}`.
    static func parseStick(_ value: ValueReader, stick: Stick, axes: [Axis]) throws(FileError) -> StickAssignment {
        let nameValue: ValueReader
        var inverted = stick == .lefty || stick == .righty
        var object: ObjectReader?
        if case .object = value.node.value {
            let o = try value.object()
            nameValue = try o.required("axis", "the rig axis this stick drives")
            if let i = o.optional("inverted") { inverted = try i.bool() }
            object = o
        } else {
            nameValue = value
        }
        let name = try nameValue.nonEmptyString()
        guard let axis = axes.firstIndex(where: { $0.name == name }) else {
            throw nameValue.error("the rig has no axis \"\(elided(name))\"; its axes: \(quotedList(axes.map(\.name)))")
        }
        try object?.finish()
        return StickAssignment(axis: axis, inverted: inverted)
    }
}

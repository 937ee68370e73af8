import Foundation

/// One camera setting as the camera names it: a widget and one of its own choices.
public struct CameraSetting: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    public var description: String { "\(name)=\(value)" }
}

/// The exposure settings a camera offers: per setting, the camera's name for it, its
/// current value and its choices (from the connected camera, read before anything moves).
public struct CameraChoices: Sendable, Equatable {
    public enum Setting: String, Sendable, CaseIterable {
        case shutter, aperture, iso, ev
    }

    public struct Widget: Sendable, Equatable {
        public var name: String
        public var current: String
        public var choices: [String]

        public init(name: String, current: String, choices: [String]) {
            self.name = name
            self.current = current
            self.choices = choices
        }
    }

    public var widgets: [Setting: Widget]

    public init(_ widgets: [Setting: Widget] = [:]) { self.widgets = widgets }
}

/// What `play` cannot shoot as asked, for `error: step N: …`.
public struct ExposureProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Resolves a program's exposure and bracket to the camera's own choices: the frames of
/// every shot as the settings to write. A setting the camera does not offer, or a value
/// that is not one of its choices, is a problem naming the valid choices; a bracket takes
/// the nearest shutter speed for each frame.
public enum ExposureMatch {
    /// The settings of each frame of one shot (one frame without a bracket).
    public static func frames(_ exposure: Exposure?, bracket: Bracket?, camera: CameraChoices) -> Result<[[CameraSetting]], ExposureProblem> {
        var base: [CameraSetting] = []
        var shutterSeconds: Double?
        if let exposure {
            if let text = exposure.shutter {
                switch pick(
                    .shutter, text, camera: camera,
                    equal: { a, b in
                        guard let x = ShutterSpeed.seconds(a), let y = ShutterSpeed.seconds(b) else { return a.lowercased() == b.lowercased() }
                        return abs(x / y - 1) < 0.02
                    })
                {
                case .success(let setting):
                    base.append(setting)
                    shutterSeconds = ShutterSpeed.seconds(setting.value)
                case .failure(let problem): return .failure(problem)
                }
            }
            if let text = exposure.aperture {
                switch pick(
                    .aperture, text, camera: camera,
                    equal: { a, b in
                        guard let x = Aperture.number(a), let y = Aperture.number(b) else { return a.lowercased() == b.lowercased() }
                        return abs(x - y) < 0.05
                    })
                {
                case .success(let setting): base.append(setting)
                case .failure(let problem): return .failure(problem)
                }
            }
            if let text = exposure.iso {
                switch pick(
                    .iso, text, camera: camera,
                    equal: { a, b in
                        if let x = Int(a), let y = Int(b) { return x == y }
                        return a.lowercased() == b.lowercased()
                    })
                {
                case .success(let setting): base.append(setting)
                case .failure(let problem): return .failure(problem)
                }
            }
            if let ev = exposure.ev {
                switch pick(
                    .ev, format(ev), camera: camera,
                    equal: { a, b in
                        guard let x = Double(a), let y = Double(b) else { return false }
                        return abs(x - y) < 0.01
                    })
                {
                case .success(let setting): base.append(setting)
                case .failure(let problem): return .failure(problem)
                }
            }
        }
        guard let bracket else { return .success([base]) }
        guard let widget = camera.widgets[.shutter] else {
            return .failure(ExposureProblem("a bracket sets the shutter speed of each frame, and this camera offers no shutter speed setting"))
        }
        guard let baseSeconds = shutterSeconds ?? ShutterSpeed.seconds(widget.current) else {
            return .failure(
                ExposureProblem(
                    "a bracket needs a base shutter speed: the camera's is \"\(elided(widget.current))\"; give \"shutter\" in \"exposure\" (choices: \(quotedList(widget.choices, limit: 40)))"
                ))
        }
        guard widget.choices.contains(where: { ShutterSpeed.seconds($0) != nil }) else {
            return .failure(ExposureProblem("the camera lists no shutter speeds in seconds: \(quotedList(widget.choices, limit: 40))"))
        }
        let others = base.filter { $0.name != widget.name }
        let frames = bracket.offsetsEV.map { offset -> [CameraSetting] in
            let speed = nearest(baseSeconds * pow(2, offset), in: widget.choices, parse: ShutterSpeed.seconds)
            return others + [CameraSetting(widget.name, speed ?? widget.current)]
        }
        return .success(frames)
    }

    /// The choice nearest `value` in stops (log2), among those `parse` reads as a number
    /// ("Bulb" and "Auto" are never picked); nil when none is.
    public static func nearest(_ value: Double, in choices: [String], parse: (String) -> Double?) -> String? {
        let target = log2(value)
        return choices.compactMap { choice in parse(choice).flatMap { $0 > 0 ? (choice, abs(log2($0) - target)) : nil } }
            .min { $0.1 < $1.1 }?.0
    }

    private static func pick(
        _ setting: CameraChoices.Setting, _ text: String, camera: CameraChoices, equal: (String, String) -> Bool
    ) -> Result<CameraSetting, ExposureProblem> {
        guard let widget = camera.widgets[setting] else {
            let offered = CameraChoices.Setting.allCases.filter { camera.widgets[$0] != nil }.map(\.rawValue)
            return .failure(
                ExposureProblem(
                    "the camera offers no \(setting.rawValue) setting; it offers \(offered.isEmpty ? "none of shutter, aperture, iso, ev" : quotedList(offered))"
                ))
        }
        if let exact = widget.choices.first(where: { $0 == text }) ?? widget.choices.first(where: { equal($0, text) }) {
            return .success(CameraSetting(widget.name, exact))
        }
        return .failure(
            ExposureProblem(
                "\(setting.rawValue) \"\(elided(text))\" is not one of the camera's choices (\(widget.name)): \(quotedList(widget.choices, limit: 60))"))
    }
}

/// Every shot's frames as the settings to write, resolved against the connected camera
/// before anything moves.
public struct ExposurePlan: Sendable, Equatable {
    /// The frames of a shot whose step gives no exposure of its own (and of the shots of a
    /// keyframes program's `--interval`).
    public var programFrames: [[CameraSetting]]
    /// The frames of the steps (0-based) with their own `exposure`.
    public var stepFrames: [Int: [[CameraSetting]]]

    public init(programFrames: [[CameraSetting]] = [[]], stepFrames: [Int: [[CameraSetting]]] = [:]) {
        self.programFrames = programFrames
        self.stepFrames = stepFrames
    }

    /// The settings of frame `bracket` (1-based) of step `step` (0-based).
    public func settings(step: Int, bracket: Int) -> [CameraSetting] {
        let frames = stepFrames[step] ?? programFrames
        return frames.indices.contains(bracket - 1) ? frames[bracket - 1] : (frames.first ?? [])
    }

    /// Resolves `program`'s exposure, its steps' and its bracket; the problem names the step.
    public static func make(program: Program, camera: CameraChoices) -> Result<ExposurePlan, ExposureProblem> {
        let shoot = program.shoot
        var plan = ExposurePlan()
        switch ExposureMatch.frames(shoot.exposure, bracket: shoot.bracket, camera: camera) {
        case .success(let frames): plan.programFrames = frames
        case .failure(let problem): return .failure(ExposureProblem("shoot: \(problem)"))
        }
        for (index, step) in program.steps.enumerated() {
            guard let own = step.exposure else { continue }
            switch ExposureMatch.frames(own.over(shoot.exposure), bracket: shoot.bracket, camera: camera) {
            case .success(let frames): plan.stepFrames[index] = frames
            case .failure(let problem): return .failure(ExposureProblem("step \(index + 1) (\(step.label)): \(problem)"))
            }
        }
        return .success(plan)
    }
}

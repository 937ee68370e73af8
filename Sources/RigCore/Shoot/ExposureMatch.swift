import FoundationEssentials
import Glibc
import RigFormat
import RigSky

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
    /// How the camera exposes for as long as the rig says (its shutter's Bulb choice, and
    /// the control that opens and closes it), if it can.
    public var bulb: BulbControl?

    public init(_ widgets: [Setting: Widget] = [:], bulb: BulbControl? = nil) {
        self.widgets = widgets
        self.bulb = bulb
    }

    /// A camera's bulb through libgphoto2: the shutter set to `shutterChoice`, then the
    /// `widget` pressed for the exposure and released (a toggle 1/0 as Nikon and Sony have
    /// it, or Canon's `eosremoterelease` "Press Full"/"Release Full").
    public struct BulbControl: Sendable, Equatable {
        public var widget: String
        public var shutterChoice: String

        public init(widget: String, shutterChoice: String) {
            self.widget = widget
            self.shutterChoice = shutterChoice
        }

        /// The values that open and close the shutter.
        public var press: String { widget == "eosremoterelease" ? "Press Full" : "1" }
        public var release: String { widget == "eosremoterelease" ? "Release Full" : "0" }
    }
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
        let speeds = bracketSpeeds(bracket, base: baseSeconds, choices: widget.choices)
        if let problem = spanProblem(bracket, base: baseSeconds, speeds: speeds, choices: widget.choices) { return .failure(problem) }
        return .success(speeds.map { others + [CameraSetting(widget.name, $0 ?? widget.current)] })
    }

    /// Each frame's shutter speed: the camera's nearest choice to base × 2^offset.
    static func bracketSpeeds(_ bracket: Bracket, base: Double, choices: [String]) -> [String?] {
        bracket.offsetsEV.map { nearest(base * pow(2, $0), in: choices, parse: ShutterSpeed.seconds) }
    }

    /// How far a chosen speed may be from the one a frame wants before the bracket counts
    /// as not spanned (a third of a stop: cameras' own steps).
    static let spanToleranceEV = 1.0 / 3

    /// Why the camera cannot shoot `bracket` around `base` (two frames would be the same
    /// exposure, or a frame lies past the camera's longest or shortest speed), with the
    /// bracket it can make there; nil when it can.
    static func spanProblem(_ bracket: Bracket, base: Double, speeds: [String?], choices: [String]) -> ExposureProblem? {
        let offsets = bracket.offsetsEV
        func off(_ i: Int) -> Double {
            guard let chosen = speeds[i].flatMap(ShutterSpeed.seconds) else { return .infinity }
            return abs(log2(chosen / (base * pow(2, offsets[i]))))
        }
        var repeats: [String: [Int]] = [:]
        for (i, speed) in speeds.enumerated() { repeats[speed ?? "?", default: []].append(i + 1) }
        let repeated = repeats.filter { $0.value.count > 1 }.sorted { $0.value[0] < $1.value[0] }
        let outside = speeds.indices.filter { off($0) > spanToleranceEV }
        guard !repeated.isEmpty || !outside.isEmpty else { return nil }
        let known = choices.compactMap(ShutterSpeed.seconds).filter { $0 > 0 }
        guard let shortest = known.min(), let longest = known.max() else { return nil }
        let wantLow = base * pow(2, offsets.min() ?? 0)
        let wantHigh = base * pow(2, offsets.max() ?? 0)
        var what: [String] = repeated.map { speed, frames in
            "frames \(listed(frames)) would \(frames.count == 2 ? "both" : "all") be \"\(speed)\""
        }
        let beyond = outside.filter { i in !repeated.contains { $0.value.contains(i + 1) } }
        if !beyond.isEmpty { what.append("frame\(beyond.count == 1 ? "" : "s") \(listed(beyond.map { $0 + 1 })) would be off by more than a third of a stop") }
        // The widest bracket at this step the camera can shoot around this base.
        let fits = Bracket.counts.filter { $0 < bracket.count }.reversed().first { count in
            let smaller = Bracket(count: count, stepEV: bracket.stepEV)
            let smallerSpeeds = bracketSpeeds(smaller, base: base, choices: choices)
            return Set(smallerSpeeds.compactMap { $0 }).count == count
                && smallerSpeeds.indices.allSatisfy { i in
                    smallerSpeeds[i].flatMap(ShutterSpeed.seconds).map { abs(log2($0 / (base * pow(2, smaller.offsetsEV[i])))) <= spanToleranceEV } ?? false
                }
        }
        let under = log2(base / shortest)
        let over = log2(longest / base)
        let can =
            fits.map { "at most \($0) frames at \(format(bracket.stepEV)) EV there" }
            ?? "no bracket at \(format(bracket.stepEV)) EV there"
        return ExposureProblem(
            "a bracket of \(bracket.count) at \(format(bracket.stepEV)) EV around \(seconds(base)) needs \(seconds(wantLow))…\(seconds(wantHigh)); the camera's shutter speeds reach \(seconds(shortest))…\(seconds(longest)), so \(what.joined(separator: ", and ")). Around \(seconds(base)) it spans \(fixed(max(0, over), 1)) EV over and \(fixed(max(0, under), 1)) EV under: \(can); give a base shutter with room both ways, fewer frames or another stepEV"
        )
    }

    private static func listed(_ numbers: [Int]) -> String {
        let words = numbers.map(String.init)
        return words.count <= 1 ? words.joined() : words.dropLast().joined(separator: ", ") + " and " + (words.last ?? "")
    }

    /// A time for messages: "4 s", "1/250 s".
    private static func seconds(_ value: Double) -> String {
        value >= 0.3 ? "\(format((value * 100).rounded() / 100)) s" : "1/\(format((1 / value).rounded())) s"
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

    /// Why a camera the rig sets cannot follow `ramp`, if it cannot: a ramp that raises ISO
    /// on a camera with no ISO setting, an aperture that moves on one with no aperture
    /// setting, an exposure longer than its longest speed (without bulb).
    public static func rampProblem(_ ramp: ExposureRamp, bulb: Bool, camera: CameraChoices) -> ExposureProblem? {
        guard let shutter = camera.widgets[.shutter] else { return nil }
        let limits = ramp.limits
        // What the ramp will use at its darkest: planned ramps know it, `auto` may use all.
        let darkest: ExposureSettings? =
            switch ramp.source {
            case .keys(_, let evs): limits.settings(forEV: evs.min() ?? 0)
            case .sun(let day, let night, _, _): limits.settings(forEV: min(day, night))
            case .auto: nil
            }
        let lowestISO = limits.isos.min() ?? 100
        let raisesISO = darkest.map { $0.iso > lowestISO * 1.001 } ?? (Set(limits.isos).count > 1)
        if raisesISO, camera.widgets[.iso] == nil {
            return ExposureProblem(
                "shoot: the ramp raises ISO (up to \(format(darkest?.iso ?? limits.isos.max() ?? lowestISO))), and this camera offers no ISO setting through libgphoto2: give the ramp \"isos\": [\(format(lowestISO))] (one ISO, set on the camera), or use a camera that lets the rig set ISO"
            )
        }
        if limits.narrowestAperture != nil, camera.widgets[.aperture] == nil {
            return ExposureProblem(
                "shoot: the ramp moves the aperture (\"narrowestAperture\"), and this camera offers no aperture setting through libgphoto2: leave \"narrowestAperture\" out"
            )
        }
        if !bulb, let longest = shutter.choices.compactMap(ShutterSpeed.seconds).max(), ramp.longestShutterSeconds > longest * 1.02 {
            return ExposureProblem(
                "shoot: the ramp may expose \(format(ramp.longestShutterSeconds)) s, and the camera's longest speed is \(format(longest)) s: give the ramp \"maxShutterSeconds\": \(format(longest)) or less\(camera.bulb != nil ? ", or set \"bulb\": true (its Bulb, timed by the rig)" : "")"
            )
        }
        return nil
    }

    /// Resolves `program`'s exposure, its steps' and its bracket; the problem names the step.
    public static func make(program: Program, camera: CameraChoices) -> Result<ExposurePlan, ExposureProblem> {
        let shoot = program.shoot
        var plan = ExposurePlan()
        // Bulb: the rig times every frame (`exposureSeconds`, or the ramp's), the camera's
        // shutter is set to its Bulb choice and the other settings matched as usual.
        var bulbSetting: CameraSetting?
        if shoot.bulb, let shutter = camera.widgets[.shutter] {
            guard let bulb = camera.bulb else {
                let longest = shutter.choices.compactMap(ShutterSpeed.seconds).max()
                return .failure(
                    ExposureProblem(
                        "shoot: \"bulb\": true needs the camera's Bulb through libgphoto2, and this camera offers none (no Bulb shutter speed with a bulb or eosremoterelease control); leave \"bulb\" out and use its own speeds\(longest.map { " (up to \(format($0)) s)" } ?? "")"
                    ))
            }
            if shoot.bracket != nil {
                return .failure(ExposureProblem("shoot: a bracket in bulb mode is not supported through libgphoto2; use the camera's own speeds for brackets"))
            }
            bulbSetting = CameraSetting(shutter.name, bulb.shutterChoice)
        }
        func frames(_ exposure: Exposure?) -> Result<[[CameraSetting]], ExposureProblem> {
            guard let bulbSetting else { return ExposureMatch.frames(exposure, bracket: shoot.bracket, camera: camera) }
            var rest = exposure
            rest?.shutter = nil
            return ExposureMatch.frames(rest, bracket: nil, camera: camera).map { $0.map { [bulbSetting] + $0 } }
        }
        if let ramp = shoot.ramp, let problem = rampProblem(ramp, bulb: shoot.bulb, camera: camera) { return .failure(problem) }
        switch frames(shoot.exposure) {
        case .success(let frames): plan.programFrames = frames
        case .failure(let problem): return .failure(ExposureProblem("shoot: \(problem)"))
        }
        for (index, step) in program.steps.enumerated() {
            guard let own = step.exposure else { continue }
            switch frames(own.over(shoot.exposure)) {
            case .success(let frames): plan.stepFrames[index] = frames
            case .failure(let problem): return .failure(ExposureProblem("step \(index + 1) (\(step.label)): \(problem)"))
            }
        }
        return .success(plan)
    }
}

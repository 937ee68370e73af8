import FoundationEssentials
import Glibc
import RigFormat
import RigSky

/// Reads program files. The rig is named by a path relative to the program (read through
/// `loadRig`, since the core does no I/O) or embedded as an object.
public enum ProgramParser {
    /// Reads a rig file for a program: gets the path as written, returns the file's text
    /// and the name to print in errors, or throws a `FileError` it built itself.
    public typealias RigLoader = (_ path: String, _ at: ValueReader) throws(FileError) -> (text: String, file: String)

    /// `now` (Unix seconds, default the clock) is what a sun-event start without a date
    /// counts from: the next such start after it.
    public static func parse(text: String, file: String, loadRig: RigLoader, now: Double? = nil) throws(FileError) -> Program {
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch { throw error.fileError(file: file) }
        return try parse(root: root, file: file, loadRig: loadRig, now: now)
    }

    /// Parses a program from a file's already-parsed JSON (so a caller that looked at the
    /// root first, as `rig check` does, parses the text once).
    public static func parse(root: JSONNode, file: String, loadRig: RigLoader, now: Double? = nil) throws(FileError) -> Program {
        let object = try ValueReader(root, JSONContext(file: file)).object()
        object.allow("$schema", "description")

        let rigValue = try object.required("rig", "a path to a rig file, or a rig object")
        let rig: Rig
        if case .string = rigValue.node.value {
            let path = try rigValue.nonEmptyString()
            let loaded = try loadRig(path, rigValue)
            rig = try RigParser.parse(text: loaded.text, file: loaded.file)
        } else if case .object = rigValue.node.value {
            rig = try RigParser.parse(rigValue)
        } else {
            throw rigValue.error("expected a path to a rig file or a rig object, found \(rigValue.node.value.kindName)")
        }

        let kindValue = try object.required("kind", "one of \(Program.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        let kind = Program.Kind(rawValue: try kindValue.oneOf(Program.Kind.allCases.map(\.rawValue))) ?? .keyframes

        // Each kind reads its own section; the others' sections are errors.
        let sections: [Program.Kind: String] = [
            .keyframes: "keyframes", .steps: "steps", .panorama: "panorama", .timelapse: "timelapse", .track: "track",
        ]
        // In file order, so the first wrong section is the one reported.
        for member in object.members where member.key != sections[kind] && sections.values.contains(member.key) {
            let key = member.key
            throw object.context.appending(key: key).error(
                "a \"\(kind.rawValue)\" program has no \"\(key)\" section; use \"\(sections[kind] ?? "")\" or set \"kind\": \"\(key)\"",
                at: member.keyLocation)
        }

        // Keys for stepped programs only: a keyframes program rejects them with its own
        // message and does not list them among its valid keys.
        func steppedOnly(_ key: String) -> ValueReader? {
            kind == .keyframes && !object.has(key) ? nil : object.optional(key)
        }
        var trigger = Trigger.keyboard
        var givenTrigger: Trigger?
        if let t = steppedOnly("trigger") {
            guard kind != .keyframes else {
                throw t.error("a keyframes program runs continuously and takes no trigger; triggers are for steps, panorama and timelapse programs")
            }
            switch Trigger.parse(try t.string()) {
            case .success(let parsed):
                trigger = parsed
                givenTrigger = parsed
            case .failure(let problem): throw t.error(problem.message)
            }
        }
        let site = try object.optional("site").map { v throws(FileError) in try parseSite(v) } ?? rig.site
        let start = try object.optional("start").map { v throws(FileError) in
            try parseStart(v, site: site, now: now ?? Date().timeIntervalSince1970)
        }
        var shoot = ShootConfig()
        if let s = object.optional("shoot") {
            shoot = try ShootConfig.parse(s, site: site)
        }
        var skyTrack: SkyTrack?
        var stepIntervals: [Double]?
        var settle = 0.5
        if let s = steppedOnly("settleSeconds") {
            guard kind != .keyframes else { throw s.error("a keyframes program does not stop to settle; settleSeconds is for stepped programs") }
            settle = try s.number(in: Bounds.settleSeconds, unit: "s")
        }
        var stopAtEnd = false
        if let s = steppedOnly("stopRecipeAtEnd") {
            guard kind != .keyframes else { throw s.error("stopRecipeAtEnd is for stepped programs (trigger \"bui\")") }
            stopAtEnd = try s.bool()
        }

        let motion: Motion
        var panorama: PanoramaPlan?
        var panoramaSpec: PanoramaSpec?
        switch kind {
        case .keyframes:
            let section = try object.required("keyframes", "an object of axis name → array of keys")
            let tracks = try parseTracks(section, rig: rig, timeKey: "t", timeUnit: "s", clock: KeyClock(start: start?.unix))
            let duration = tracks.compactMap { $0?.endTime }.max() ?? 0
            motion = .continuous(tracks: tracks, durationSeconds: duration)
        case .steps:
            let section = try object.required("steps", "an array of {\"pose\": {axis: position}}")
            motion = .stepped(try parseSteps(section, rig: rig, settle: settle))
        case .panorama:
            let section = try object.required("panorama", "lens, overlap and pan/tilt ranges")
            let spec = try parsePanorama(section, rig: rig)
            let shots = PanoramaPlanner.shotCount(spec)
            guard shots <= Double(Bounds.maxShots) else {
                // The count stops early once past the bound: "more than", not a figure.
                throw section.error(
                    "the panorama needs more than \(Bounds.maxShots) shots; valid: at most \(Bounds.maxShots) (use a wider lens, less overlap or a smaller pan/tilt range)"
                )
            }
            let plan = PanoramaPlanner.plan(spec, currentPan: rig.axes[spec.panAxis].home, currentTilt: rig.axes[spec.tiltAxis].home)
            panorama = plan
            panoramaSpec = spec
            motion = .stepped(steps(for: plan, spec: spec, rig: rig, settle: settle))
        case .timelapse:
            let section = try object.required("timelapse", "frames and keyframes keyed by frame number")
            motion = .stepped(
                try parseTimelapse(section, rig: rig, settle: settle, trigger: givenTrigger, start: start?.unix, intervals: &stepIntervals))
        case .track:
            let section = try object.required("track", "the target, the start, and frames or durationSeconds")
            let parsed = try parseTrack(section, rig: rig, site: site, trigger: givenTrigger, settle: settle, programStart: start)
            skyTrack = parsed.0
            motion = parsed.1
        }
        try object.finish()
        var program = Program(
            file: file, rig: rig, kind: kind, motion: motion, trigger: trigger,
            stopRecipeAtEnd: stopAtEnd, panorama: panorama, panoramaSpec: panoramaSpec, settleSeconds: settle)
        program.shoot = shoot
        program.site = site
        program.track = skyTrack
        program.stepIntervals = stepIntervals
        program.start = start
        return program
    }

    /// How a key's time may be given besides its number: a clock time (ISO 8601 with its
    /// zone) counted from the program's `start`, and in a timelapse `"t"` (seconds from the
    /// start, or a clock time) turned into a frame by the frames' planned times.
    struct KeyClock {
        /// The program's start, Unix seconds (nil: the program has none).
        var start: Double?
        /// A timelapse's frames' planned shot times, seconds from the start (nil: not paced
        /// by an interval).
        var frameSeconds: [Double]?

        /// Seconds from the start of a clock time (a string) or a number of seconds.
        func seconds(_ value: ValueReader, bounds: ClosedRange<Double>) throws(FileError) -> Double {
            guard case .string = value.node.value else { return try value.number(in: bounds, unit: "s") }
            let unix = try ProgramParser.parseClockTime(value, what: "a clock time")
            guard let start else {
                throw value.error("a key at a clock time counts from the program's start: give \"start\" (a time or a sun event) in the program")
            }
            let seconds = unix - start
            guard seconds >= 0 else {
                throw value.error(
                    "\(UTCTime.text(unix, dateToo: true)) is \(format((-seconds).rounded())) s before the program's start (\(UTCTime.text(start, dateToo: true)))"
                )
            }
            guard bounds.contains(seconds) else {
                throw value.error(
                    "\(UTCTime.text(unix, dateToo: true)) is \(format(seconds.rounded())) s after the program's start; valid: at most \(format(bounds.upperBound)) s after it"
                )
            }
            return seconds
        }

        /// The (fractional) frame shot at `seconds` from the start, by the frames' planned times.
        func frame(_ value: ValueReader) throws(FileError) -> Double {
            guard let times = frameSeconds, let last = times.last else {
                throw value.error("a timelapse key by time (\"t\") needs the frames' times: give \"trigger\": \"interval:SECONDS\"")
            }
            let s = try seconds(value, bounds: Bounds.keyTimeSeconds.lowerBound...max(Bounds.keyTimeSeconds.upperBound, last))
            guard s <= last + 1e-9 else {
                throw value.error(
                    "t \(format(s.rounded())) s is after the last frame, shot \(format(last.rounded())) s after the start; raise \"frames\" or move the key")
            }
            // The last frame shot at or before s.
            var lo = 0
            var hi = times.count - 1
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if times[mid] <= s { lo = mid } else { hi = mid - 1 }
            }
            guard lo + 1 < times.count, times[lo + 1] > times[lo] else { return Double(lo) }
            return Double(lo) + (s - times[lo]) / (times[lo + 1] - times[lo])
        }
    }

    /// `{"pan": [{"t": 0, "value": -30}, …], …}` → one track per rig axis.
    static func parseTracks(_ section: ValueReader, rig: Rig, timeKey: String, timeUnit: String, clock: KeyClock = KeyClock()) throws(FileError)
        -> [AxisTrack?]
    {
        let object = try section.object()
        var tracks = [AxisTrack?](repeating: nil, count: rig.axes.count)
        guard !object.members.isEmpty else {
            throw section.error("no axis has keys; give at least one axis, e.g. \"\(rig.axes[0].name)\": [{\"\(timeKey)\": 0, \"value\": 0}]")
        }
        for member in object.members {
            guard let axis = rig.axisIndex(named: member.key) else {
                let ctx = object.context.appending(key: member.key)
                throw ctx.error(
                    "the rig has no axis \"\(elided(member.key))\"; its axes: \(quotedList(rig.axes.map(\.name)))",
                    at: member.keyLocation)
            }
            tracks[axis] = try parseKeys(object.required(member.key), timeKey: timeKey, timeUnit: timeUnit, clock: clock)
        }
        try object.finish()
        return tracks
    }

    static func parseKeys(_ value: ValueReader, timeKey: String, timeUnit: String, clock: KeyClock = KeyClock()) throws(FileError) -> AxisTrack {
        let elements = try value.nonEmptyArray()
        var keys: [Keyframe] = []
        keys.reserveCapacity(elements.count)
        for keyValue in elements {
            let key = try keyValue.object()
            let time: Double
            let timeValue: ValueReader
            let shownKey: String
            if timeUnit == "s" {
                timeValue = try key.required(timeKey, "the key's time: seconds from the start, or a clock time such as \"2026-11-26T16:45:00Z\"")
                time = try clock.seconds(timeValue, bounds: Bounds.keyTimeSeconds)
                shownKey = timeKey
            } else if !key.has(timeKey), let t = key.optional("t") {
                // A timelapse key by time: seconds from the start or a clock time.
                timeValue = t
                time = try clock.frame(t)
                shownKey = "t"
            } else {
                timeValue = try key.required(timeKey, "the key's frame number (or \"t\": seconds from the start or a clock time)")
                time = Double(try timeValue.integer(in: 0...(Bounds.maxSteps - 1)))
                shownKey = timeKey
            }
            if key.has(timeKey), let t = key.optional("t"), timeUnit != "s" {
                throw t.error("give the key's \"frame\" or its time \"t\", not both")
            }
            if let last = keys.last, time <= last.time {
                let what =
                    shownKey == "t" && timeUnit != "s"
                    ? "its time falls at frame \(fixed(time, 2)), not after the previous key's frame \(fixed(last.time, 2))"
                    : "\(timeKey) \(format(time)) does not come after the previous key's \(format(last.time))"
                throw timeValue.error(
                    "\(what); keys must be in increasing \(timeKey == "t" ? "time" : "frame") order"
                )
            }
            let position = try key.required("value", "the axis position at this key").number(in: Bounds.programPosition)
            var interpolation = Interpolation.smooth
            if let i = key.optional("interp") {
                let name = try i.oneOf(Interpolation.names)
                if name == "bezier" {
                    let handles = try key.required("bezier", "[x1, y1, x2, y2] handles for \"interp\": \"bezier\"")
                    let h = try handles.numbers(count: 4)
                    guard (0...1).contains(h[0]), (0...1).contains(h[2]) else {
                        throw handles.error("bezier x handles must lie in 0…1 (time cannot run backwards); found x1 = \(format(h[0])), x2 = \(format(h[2]))")
                    }
                    guard Bounds.bezierY.contains(h[1]), Bounds.bezierY.contains(h[3]) else {
                        throw handles.error(
                            "bezier y handles must lie in \(format(Bounds.bezierY.lowerBound))…\(format(Bounds.bezierY.upperBound)) (times the segment's change); found y1 = \(format(h[1])), y2 = \(format(h[3]))"
                        )
                    }
                    interpolation = .bezier(x1: h[0], y1: h[1], x2: h[2], y2: h[3])
                } else {
                    interpolation = Interpolation(name: name) ?? .smooth
                }
            }
            if key.has("bezier"), case .bezier = interpolation {
            } else if let b = key.optional("bezier") {
                throw b.error("\"bezier\" handles need \"interp\": \"bezier\"")
            }
            try key.finish()
            keys.append(Keyframe(time: time, value: position, interpolation: interpolation))
        }
        return AxisTrack(keys: keys)
    }

    static func parseSteps(_ section: ValueReader, rig: Rig, settle: Double) throws(FileError) -> [Step] {
        var steps: [Step] = []
        var pose = rig.homePose
        let stepValues = try section.nonEmptyArray()
        guard stepValues.count <= Bounds.maxSteps else {
            throw section.error("\(stepValues.count) steps; valid: at most \(Bounds.maxSteps)")
        }
        for (index, stepValue) in stepValues.enumerated() {
            let step = try stepValue.object()
            let poseObject = try step.required("pose", "an object of axis name → position").object()
            guard !poseObject.members.isEmpty else { throw poseObject.error("an empty pose; name at least one axis") }
            for member in poseObject.members {
                guard let axis = rig.axisIndex(named: member.key) else {
                    throw poseObject.context.appending(key: member.key).error(
                        "the rig has no axis \"\(elided(member.key))\"; its axes: \(quotedList(rig.axes.map(\.name)))",
                        at: member.keyLocation)
                }
                pose[axis] = try poseObject.required(member.key).number(in: Bounds.programPosition)
            }
            try poseObject.finish()
            let stepSettle = try step.optional("settleSeconds")?.number(in: Bounds.settleSeconds, unit: "s") ?? settle
            let label = try step.optional("label")?.string() ?? "step \(index + 1)"
            let exposure = try step.optional("exposure").map { v throws(FileError) in try Exposure.parse(v) }
            try step.finish()
            steps.append(Step(pose: pose, settleSeconds: stepSettle, label: label, exposure: exposure))
        }
        return steps
    }

    static func parsePanorama(_ section: ValueReader, rig: Rig) throws(FileError) -> PanoramaSpec {
        let object = try section.object()
        func axis(_ key: String, _ fallback: String) throws(FileError) -> Int {
            let value = object.optional(key)
            let name = try value?.string() ?? fallback
            guard let index = rig.axisIndex(named: name) else {
                let message = "the rig has no axis \"\(elided(name))\"; its axes: \(quotedList(rig.axes.map(\.name)))"
                throw value?.error(message) ?? object.error(message + (value == nil ? " (set \"\(key)\")" : ""))
            }
            guard rig.axes[index].kind == .servo else {
                throw value?.error("axis \"\(name)\" is a pwm axis; a panorama needs servo axes") ?? object.error("axis \"\(name)\" is a pwm axis")
            }
            return index
        }
        let panAxis = try axis("panAxis", "pan")
        let tiltAxis = try axis("tiltAxis", "tilt")
        if panAxis == tiltAxis { throw object.error("panAxis and tiltAxis must be different axes") }

        let (fov, camera) = try parseLens(
            object.required(
                "lens",
                "a preset such as \"fullframe-24mm\", {\"preset\"}, {\"focalLengthMm\", \"sensorWidthMm\", \"sensorHeightMm\"} or {\"horizontalFovDeg\", \"verticalFovDeg\"}"
            ))

        func range(_ key: String, _ bounds: ClosedRange<Double>, in reader: ObjectReader, what: String) throws(FileError) -> ClosedRange<Double> {
            let value = try reader.required(key, what)
            let pair = try value.numbers(count: 2, in: bounds, unit: "°")
            let range = min(pair[0], pair[1])...max(pair[0], pair[1])
            guard range.upperBound - range.lowerBound <= 360 else {
                throw value.error(
                    "[\(format(pair[0])), \(format(pair[1]))] spans \(format(range.upperBound - range.lowerBound))°, more than a full turn; valid: a span of at most 360°"
                )
            }
            return range
        }
        // The shot centres: given, or inset half a view from the edges of an area.
        let pan: ClosedRange<Double>
        let tilt: ClosedRange<Double>
        if let areaValue = object.optional("area") {
            for key in ["pan", "tilt"] {
                guard let given = object.optional(key) else { continue }
                throw given.error("give the shot centres (\"pan\" and \"tilt\") or the \"area\" to cover, not both")
            }
            let area = try areaValue.object()
            let edges = "[from, to] edge of the scene in degrees"
            let panEdges = try range("pan", Bounds.panDegrees, in: area, what: edges)
            let tiltEdges = try range("tilt", Bounds.tiltDegrees, in: area, what: edges)
            try area.finish()
            func inset(_ edges: ClosedRange<Double>, by half: Double) -> ClosedRange<Double> {
                // Narrower than one view: one shot in the middle.
                guard edges.upperBound - edges.lowerBound > 2 * half else {
                    let middle = (edges.lowerBound + edges.upperBound) / 2
                    return middle...middle
                }
                return (edges.lowerBound + half)...(edges.upperBound - half)
            }
            // A full turn has no edges to inset.
            pan = panEdges.upperBound - panEdges.lowerBound >= 360 - 1e-9 ? panEdges : inset(panEdges, by: fov.horizontalDegrees / 2)
            tilt = inset(tiltEdges, by: fov.verticalDegrees / 2)
        } else {
            let centres = "[first, last] shot centre in degrees (or \"area\": {\"pan\", \"tilt\"}, the edges to cover)"
            pan = try range("pan", Bounds.panDegrees, in: object, what: centres)
            tilt = try range("tilt", Bounds.tiltDegrees, in: object, what: centres)
        }

        // Rows and columns, given: spaced evenly, the overlap is what results.
        func count(_ key: String, span: Double, over axis: String) throws(FileError) -> Int? {
            guard let value = object.optional(key) else { return nil }
            let n = try value.integer(in: 1...Bounds.maxShots)
            let range = key == "rows" ? tilt : pan
            if n == 1, span > 1e-9 {
                throw value.error(
                    "1 of \(key) would be one shot at the middle of \(axis) \(format(range.lowerBound))…\(format(range.upperBound))°; valid: 2 or more, or a single \(axis) ([\(format(range.lowerBound)), \(format(range.lowerBound))])"
                )
            }
            if n > 1, span <= 1e-9 {
                throw value.error("\(n) \(key) over a single \(axis) (\(format(range.lowerBound))°); valid: 1, or give a \(axis) range")
            }
            return n
        }
        let rows = try count("rows", span: tilt.upperBound - tilt.lowerBound, over: "tilt")
        let columns = try count("columns", span: pan.upperBound - pan.lowerBound, over: "pan")
        let overlapValue = object.optional("overlapPercent")
        if rows != nil, columns != nil, let overlapValue {
            throw overlapValue.error("with both \"rows\" and \"columns\" the overlap is what they give; remove \"overlapPercent\" (or one of them)")
        }
        let overlap = try overlapValue?.number(in: 5...90, unit: "%") ?? 30

        // Zenith and nadir: one shot at the pole, or at the tilt axis's soft limit if a shot
        // there still sees all round the pole.
        let tiltLimits = rig.axes[tiltAxis].softMin...rig.axes[tiltAxis].softMax
        func pole(_ key: String, up: Bool) throws(FileError) -> Double? {
            guard let value = object.optional(key), try value.bool() else { return nil }
            let limit = up ? tiltLimits.upperBound : tiltLimits.lowerBound
            let edge = up ? tilt.upperBound : tilt.lowerBound
            if abs(edge) >= 90 - 1e-9 {
                throw value.error("the \(up ? "top" : "bottom") row is already at \(format(edge))°, straight \(up ? "up" : "down"); remove \"\(key)\"")
            }
            let at = up ? min(90, limit) : max(-90, limit)
            let spec = PanoramaSpec(fieldOfView: fov, overlap: 0, pan: pan, tilt: tilt, panAxis: panAxis, tiltAxis: tiltAxis)
            let needed = 90 - spec.poleReachDegrees
            guard spec.poleCapDegrees(atTilt: at) > 1e-9 else {
                throw value.error(
                    "a \(key) shot looks straight \(up ? "up" : "down"), but tilt axis \"\(rig.axes[tiltAxis].name)\" stops at its soft limit \(format(limit))° (softLimits); with this lens a shot there cannot see the pole; valid: a soft limit of at least \(fixed(needed, 1))° \(up ? "up" : "down") (or a wider lens), or remove \"\(key)\""
                )
            }
            return at
        }
        let zenith = try pole("zenith", up: true)
        let nadir = try pole("nadir", up: false)
        try object.finish()
        let spec = PanoramaSpec(
            fieldOfView: fov, overlap: overlap / 100, pan: pan, tilt: tilt, panAxis: panAxis, tiltAxis: tiltAxis, lens: camera,
            rows: rows, columns: columns, zenithTilt: zenith, nadirTilt: nadir)
        try checkOverlap(spec, object: object)
        return spec
    }

    /// Overlap between neighbouring shots below which a stitcher finds too few control
    /// points: given rows, columns, a zenith or a nadir shot that leave less are refused.
    public static let minimumOverlap = 0.10

    /// Refuses a spec whose given rows or columns (or zenith/nadir shot) overlap less than
    /// `minimumOverlap`, saying what would be valid.
    static func checkOverlap(_ spec: PanoramaSpec, object: ObjectReader) throws(FileError) {
        // Past the shot bound the caller refuses the spec as too large.
        guard PanoramaPlanner.shotCount(spec) <= Double(Bounds.maxShots) else { return }
        let (horizontal, vertical) = PanoramaPlanner.overlaps(spec)
        let minimum = percent(minimumOverlap, digits: 0)
        if let columns = spec.columns, horizontal < minimumOverlap - 1e-9 {
            var wider = spec
            var valid = columns
            let rows = max(1, PanoramaPlanner.shotCount(spec) / Double(columns))
            // Bounded: past the shot bound no count is valid.
            while Double(valid) * rows <= Double(Bounds.maxShots), PanoramaPlanner.overlaps(wider).horizontal < minimumOverlap - 1e-9 {
                valid += 1
                wider.columns = valid
            }
            let what =
                Double(valid) * rows <= Double(Bounds.maxShots)
                ? "at least \(valid) columns" : "more columns than \(Bounds.maxShots) shots allow (a wider lens)"
            let message =
                "\(columns) column\(columns == 1 ? "" : "s") over pan \(format(spec.pan.lowerBound))…\(format(spec.pan.upperBound))° overlap \(percent(horizontal, digits: 1)) with this lens; valid: \(what) (\(minimum) overlap or more)"
            throw object.optional("columns")?.error(message) ?? object.error(message)
        }
        guard vertical < minimumOverlap - 1e-9 else { return }
        let vfov = spec.fieldOfView.verticalDegrees
        let span = spec.tilt.upperBound - spec.tilt.lowerBound
        if let rows = spec.rows, rows > 1, 1 - span / Double(rows - 1) / vfov < minimumOverlap - 1e-9 {
            let valid = Int(min((span / (vfov * (1 - minimumOverlap)) - 1e-9).rounded(.up) + 1, Double(Bounds.maxShots)))
            let message =
                "\(rows) rows over tilt \(format(spec.tilt.lowerBound))…\(format(spec.tilt.upperBound))° overlap \(percent(1 - span / Double(rows - 1) / vfov, digits: 1)) with this lens; valid: at least \(valid) rows (\(minimum) overlap or more)"
            throw object.optional("rows")?.error(message) ?? object.error(message)
        }
        let grid = PanoramaPlanner.rowGrid(spec)
        let gridRows = grid.rows >= 1 ? Int(min(grid.rows, Double(Bounds.maxShots))) : 1
        // The zenith or nadir shot is too far from the rows next to it.
        if let zenith = spec.zenithTilt, let value = object.optional("zenith") {
            let top = PanoramaPlanner.rowTilt(spec, row: gridRows - 1, grid: grid)
            let reach = top + vfov / 2 - (90 - spec.poleCapDegrees(atTilt: zenith))
            if reach / vfov < minimumOverlap - 1e-9 {
                let needed = 90 - spec.poleCapDegrees(atTilt: zenith) + minimumOverlap * vfov - vfov / 2
                throw value.error(
                    "the zenith shot (tilt \(format(zenith))°) and the top row (tilt \(fixed(top, 1))°) overlap \(percent(reach / vfov, digits: 1)); valid: a top row at tilt \(fixed(needed, 1))° or higher (\(minimum) overlap or more)"
                )
            }
        }
        if let nadir = spec.nadirTilt, let value = object.optional("nadir") {
            let bottom = PanoramaPlanner.rowTilt(spec, row: 0, grid: grid)
            let reach = -90 + spec.poleCapDegrees(atTilt: nadir) - (bottom - vfov / 2)
            if reach / vfov < minimumOverlap - 1e-9 {
                let needed = -90 + spec.poleCapDegrees(atTilt: nadir) - minimumOverlap * vfov + vfov / 2
                throw value.error(
                    "the nadir shot (tilt \(format(nadir))°) and the bottom row (tilt \(fixed(bottom, 1))°) overlap \(percent(reach / vfov, digits: 1)); valid: a bottom row at tilt \(fixed(needed, 1))° or lower (\(minimum) overlap or more)"
                )
            }
        }
    }

    /// A panorama's lens: a preset name (`"fullframe-24mm"`), `{"preset", "orientation"}`,
    /// a focal length on a sensor, or the field of view; the view as mounted (portrait
    /// swaps it) and the camera as the stitcher files need it.
    static func parseLens(_ lensValue: ValueReader) throws(FileError) -> (FieldOfView, CameraLens) {
        func preset(_ value: ValueReader) throws(FileError) -> (FieldOfView, CameraLens) {
            switch LensPreset.named(try value.nonEmptyString()) {
            case .failure(let problem): throw value.error(problem.message)
            case .success(let p):
                let f = p.focalLengthMillimetres
                let (w, h) = (p.sensor.widthMillimetres, p.sensor.heightMillimetres)
                let fov = FieldOfView(focalLengthMillimetres: f, sensorWidthMillimetres: w, sensorHeightMillimetres: h)
                return (fov, CameraLens(sensorFieldOfView: fov, focalLengthMillimetres: f, sensorWidthMillimetres: w, sensorHeightMillimetres: h))
            }
        }
        if case .string = lensValue.node.value { return try preset(lensValue) }
        let lens = try lensValue.object()
        var fov: FieldOfView
        var camera: CameraLens
        if lens.has("preset"), let p = lens.optional("preset") {
            for key in ["focalLengthMm", "sensorWidthMm", "sensorHeightMm", "horizontalFovDeg", "verticalFovDeg"] {
                guard let given = lens.optional(key) else { continue }
                throw given.error("a preset gives the focal length and sensor; remove \"\(key)\" (or the preset)")
            }
            (fov, camera) = try preset(p)
        } else if lens.has("focalLengthMm") {
            let f = try lens.required("focalLengthMm").number(in: LensPreset.focalLengths, unit: "mm")
            let w = try lens.optional("sensorWidthMm")?.number(in: 1...100, unit: "mm") ?? 36
            let h = try lens.optional("sensorHeightMm")?.number(in: 1...100, unit: "mm") ?? 24
            fov = FieldOfView(focalLengthMillimetres: f, sensorWidthMillimetres: w, sensorHeightMillimetres: h)
            camera = CameraLens(sensorFieldOfView: fov, focalLengthMillimetres: f, sensorWidthMillimetres: w, sensorHeightMillimetres: h)
        } else if lens.has("horizontalFovDeg") {
            let h = try lens.required("horizontalFovDeg").number(in: 1...179, unit: "°")
            let v = try lens.required("verticalFovDeg", "the vertical field of view").number(in: 1...179, unit: "°")
            fov = FieldOfView(horizontalDegrees: h, verticalDegrees: v)
            camera = CameraLens(sensorFieldOfView: fov)
        } else {
            throw lensValue.error(
                "give a \"preset\" (\(LensPreset.grammar)), \"focalLengthMm\" (with \"sensorWidthMm\"/\"sensorHeightMm\", default full frame 36×24) or \"horizontalFovDeg\" and \"verticalFovDeg\""
            )
        }
        if let o = lens.optional("orientation"), try o.oneOf(["landscape", "portrait"]) == "portrait" {
            fov = FieldOfView(horizontalDegrees: fov.verticalDegrees, verticalDegrees: fov.horizontalDegrees)
            camera.orientation = .portrait
        }
        try lens.finish()
        return (fov, camera)
    }

    /// The steps that shoot a planned panorama.
    public static func steps(for plan: PanoramaPlan, spec: PanoramaSpec, rig: Rig, settle: Double) -> [Step] {
        plan.shots.enumerated().map { index, shot in
            var pose = rig.homePose
            pose[spec.panAxis] = shot.panDegrees
            pose[spec.tiltAxis] = shot.tiltDegrees
            return Step(pose: pose, settleSeconds: settle, label: "shot \(index + 1) (row \(shot.row + 1), column \(shot.column + 1))")
        }
    }

    /// `"intervalKeys": [{"frame": N, "seconds": S}, …]`: the interval after each frame,
    /// interpolated linearly between keys (held past the ends). Needs `interval:S`. Keys by
    /// time, `{"t": SECONDS or a clock time, "seconds": S}`, ramp the interval with time
    /// instead: each frame's interval is the ramp's at its planned shot time.
    static func parseIntervalKeys(_ value: ValueReader, frames: Int, trigger: Trigger?, clock: KeyClock = KeyClock()) throws(FileError) -> [Double] {
        guard case .interval? = trigger else {
            throw value.error("a ramped interval paces the shots: give \"trigger\": \"interval:SECONDS\" (the keys then set each frame's interval)")
        }
        var keys: [(frame: Double, seconds: Double)] = []
        var byTime: Bool?
        for key in try value.nonEmptyArray() {
            let k = try key.object()
            let at: Double
            if !k.has("frame"), let t = k.optional("t") {
                if byTime == false { throw t.error("these keys are by frame: give every key a \"frame\", or every key a time \"t\"") }
                byTime = true
                at = try clock.seconds(t, bounds: 0...864_000)
                if let last = keys.last, at <= last.frame {
                    throw t.error("t \(format(at)) s is not after the previous key's \(format(last.frame)) s; keys go in increasing time")
                }
            } else {
                let frameValue = try k.required("frame", "the frame the key is at (or \"t\": seconds from the start or a clock time)")
                if byTime == true { throw frameValue.error("these keys are by time: give every key a time \"t\", or every key a \"frame\"") }
                byTime = false
                if let t = k.optional("t") { throw t.error("give the key's \"frame\" or its time \"t\", not both") }
                let frame = Double(try frameValue.integer(in: 0...max(0, frames - 1)))
                if let last = keys.last, frame <= last.frame {
                    throw frameValue.error("frame \(Int(frame)) is not after frame \(Int(last.frame)); keys go in increasing frames")
                }
                at = frame
            }
            keys.append((at, try k.required("seconds", "the interval after this frame").number(in: Bounds.intervalSeconds, unit: "s")))
            try k.finish()
        }
        func ramp(_ x: Double) -> Double {
            guard let next = keys.firstIndex(where: { $0.frame >= x }) else { return keys.last?.seconds ?? 1 }
            guard next > 0 else { return keys[0].seconds }
            let (a, b) = (keys[next - 1], keys[next])
            return a.seconds + (b.seconds - a.seconds) * (x - a.frame) / (b.frame - a.frame)
        }
        guard byTime == true else { return (0..<frames).map { ramp(Double($0)) } }
        var t = 0.0
        return (0..<frames).map { _ in
            let interval = ramp(t)
            t += interval
            return interval
        }
    }

    /// Each frame's planned shot time, seconds from the first: the sum of the intervals
    /// before it. nil when the frames are not paced by an interval.
    static func frameSeconds(frames: Int, trigger: Trigger?, intervals: [Double]?) -> [Double]? {
        guard case .interval(let interval)? = trigger else { return nil }
        var t = 0.0
        return (0..<frames).map { f in
            defer { t += intervals?[f] ?? interval }
            return t
        }
    }

    static func parseTimelapse(
        _ section: ValueReader, rig: Rig, settle: Double, trigger: Trigger?, start: Double? = nil, intervals: inout [Double]?
    ) throws(FileError) -> [Step] {
        let object = try section.object()
        let framesValue = try object.required("frames", "how many frames to shoot")
        let frames = try framesValue.integer(in: 1...Bounds.maxSteps)
        // The interval first: keys by time fall on frames by the frames' times.
        if let keys = object.optional("intervalKeys") {
            intervals = try parseIntervalKeys(keys, frames: frames, trigger: trigger, clock: KeyClock(start: start))
        }
        let clock = KeyClock(start: start, frameSeconds: frameSeconds(frames: frames, trigger: trigger, intervals: intervals))
        let tracks = try parseTracks(
            object.required("keyframes", "an object of axis name → array of {\"frame\", \"value\"}"), rig: rig, timeKey: "frame", timeUnit: "frame",
            clock: clock)
        for (axis, track) in tracks.enumerated() {
            guard let track, let last = track.keys.last, Int(last.time) > frames - 1 else { continue }
            let keyFrame = try? object.optional("keyframes")?.member(rig.axes[axis].name)?.array().last?.member("frame")
            throw (keyFrame ?? framesValue).error(
                "frame \(Int(last.time)) is past the last frame \(frames - 1) (\"frames\": \(frames) counts from 0); raise \"frames\" or move the key")
        }
        try object.finish()
        var cursors = [Int](repeating: 0, count: tracks.count)
        return (0..<frames).map { frame in
            var pose = rig.homePose
            for axis in tracks.indices {
                if let track = tracks[axis] { pose[axis] = track.value(at: Double(frame), cursor: &cursors[axis]) }
            }
            return Step(pose: pose, settleSeconds: settle, label: "frame \(frame + 1)")
        }
    }
}

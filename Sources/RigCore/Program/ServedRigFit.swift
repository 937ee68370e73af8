import RigFormat

/// Whether a program can play on a rig other than the one it was parsed against (a
/// server's rig, with the program's own `rig` embedded or named): its motion is laid out
/// per axis of the rig it names, so that rig must have the served rig's axes, by name and
/// in order, with the same soft limits, speed and acceleration. A program whose rig is
/// not the served rig is not playable there: nothing about it is indexed by the other
/// rig's axes.
public enum ServedRigFit {
    /// nil when `program` may play on `served`, else why not (one short sentence).
    public static func problem(program: Rig, served: Rig) -> String? {
        let wanted = program.axes.map(\.name)
        let have = served.axes.map(\.name)
        guard wanted == have else {
            return "its rig's axes (\(list(wanted))) are not the served rig's (\(list(have)))"
        }
        for (a, b) in zip(program.axes, served.axes) {
            var differences: [String] = []
            if a.softMin != b.softMin || a.softMax != b.softMax {
                differences.append("softLimits [\(format(a.softMin)), \(format(a.softMax))] ≠ [\(format(b.softMin)), \(format(b.softMax))]")
            }
            if a.maxVelocity != b.maxVelocity { differences.append("maxVelocity \(format(a.maxVelocity)) ≠ \(format(b.maxVelocity))") }
            if a.maxAcceleration != b.maxAcceleration {
                differences.append("maxAcceleration \(format(a.maxAcceleration)) ≠ \(format(b.maxAcceleration))")
            }
            if a.kind != b.kind { differences.append("kind \(a.kind) ≠ \(b.kind)") }
            if let first = differences.first {
                return "its rig's axis \"\(elided(a.name))\" differs from the served rig's: \(first)"
            }
        }
        if program.loopRateHz != served.loopRateHz {
            return "its rig's loopRateHz \(format(program.loopRateHz)) is not the served rig's \(format(served.loopRateHz))"
        }
        return nil
    }

    private static func list(_ names: [String]) -> String { quotedList(names) }
}

/// A program file as a server plays it on its own rig: parsed with the program's `rig`
/// path read as the served rig, refused if it embeds another rig (`ServedRigFit`), planned
/// from where the rig stands and checked from `fromStep`. `rig serve`'s program library
/// and its fuzz target run exactly this.
public enum ServedProgram {
    public enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file does not parse (a `FILE:LINE:COL: error: …` line).
        case malformed(String)
        /// It parses, for another rig.
        case notPlayable(String)
        /// `fromStep` is below 1.
        case badStep(String)
        /// `fromStep` is past the last step.
        case noSuchStep(String)

        public var description: String {
            switch self {
            case .malformed(let m), .notPlayable(let m), .badStep(let m), .noSuchStep(let m): m
            }
        }
    }

    /// - Parameters:
    ///   - maxTicks: the check's simulation budget (`FeasibilityChecker`).
    ///   - cameraReportsShots: the served rig's camera reports each shot's end (a real
    ///     camera: the player holds until it does); false for the simulated camera, whose
    ///     shots the player times.
    public static func prepare(
        text: String, file: String, served: Rig, rigText: String, rigPath: String, fromStep: Int, startPose: [Double],
        maxTicks: Int = Bounds.maxTicks, cameraReportsShots: Bool = false
    ) throws(Refusal) -> (program: Program, console: HostedProgram, report: FeasibilityReport) {
        var program: Program
        do {
            program = try ProgramParser.parse(text: text, file: file, loadRig: { _, _ in (rigText, rigPath) })
        } catch {
            throw .malformed(error.description)
        }
        if let problem = ServedRigFit.problem(program: program.rig, served: served) {
            throw .notPlayable("\(file): not playable on this rig: \(problem)")
        }
        program.rig = served
        program = program.startingFrom(startPose)
        let steps = program.steps.count
        guard fromStep >= 1 else { throw .badStep("fromStep counts from 1") }
        guard fromStep <= max(steps, 1) else { throw .noSuchStep("\(elided(file)) has no step \(fromStep); valid: 1…\(max(steps, 1))") }
        // The served rig's camera shoots every step, as in `rig play` (Cascable shoots with bui).
        let shots =
            program.trigger == .bui
            ? nil : program.shotTiming.map { program.shootingPlan(timing: $0, selfTimed: !cameraReportsShots, trigger: program.trigger) }
        let console = HostedProgram(
            name: file, motion: program.motion, trigger: program.trigger, firstStep: fromStep - 1, shots: shots, ramp: program.shoot.ramp,
            stepIntervals: program.stepIntervals)
        let report = FeasibilityChecker.check(
            rig: served, motion: console.motion, startPose: startPose, shooting: console.shooting, firstStep: console.firstStep, maxTicks: maxTicks)
        return (program, console, report)
    }
}

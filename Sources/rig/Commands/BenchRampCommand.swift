import ArgumentParser
import Foundation
import RigCore

/// `rig bench ramp`: exposure ramps through a simulated sunset.
struct BenchRampCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ramp",
        abstract: "Play exposure ramps through the simulated sunset (EV 14 → −4 in 90 min) and measure the flicker.",
        discussion: """
            A frame every --interval seconds; headlights light a few frames 3 EV over the scene. \
            For each ramp: the fraction of frame-to-frame brightness changes ≤ 0.1 EV, the 99th \
            percentile and largest change (the ramp's own: the headlights' extra light left out), \
            and the largest distance from the target. auto: the closed loop on each frame's \
            measure; planned: keys that follow the scene; naive: a whole stop whenever a frame is \
            a stop or more off.
            """
    )

    @Option(help: ArgumentHelp("Seconds between frames.", valueName: "s")) var interval = 5.0
    @Option(help: ArgumentHelp("Minutes of sunset.", valueName: "min")) var minutes = 90.0
    @Flag(help: "Print the figures as JSON.") var json = false

    func validate() throws {
        guard (0.5...600).contains(interval) else { throw ValidationError("--interval: valid: 0.5…600 s") }
        guard (5...600).contains(minutes) else { throw ValidationError("--minutes: valid: 5…600") }
    }

    func run() throws {
        let seconds = minutes * 60
        let frames = Int(seconds / interval)
        let outliers = [frames / 5: 3.0, frames / 2: 3.0, frames / 2 + 1: 2.5, frames * 5 / 6: 3.0]
        let scene = SimScene(keys: [(0, 14), (seconds, -4)], outliers: outliers)
        let keyFrames = stride(from: 0, through: frames, by: max(1, frames / 100)).map(Double.init)
        let rows: [(String, RampSimulation.Figures)] = [
            (
                "auto",
                RampSimulation.figures(
                    RampSimulation.run(ExposureRamp(source: .auto(targetEV: 0, startEV: 14)), scene: scene, frames: frames, interval: interval))
            ),
            (
                "planned",
                RampSimulation.figures(
                    RampSimulation.run(
                        ExposureRamp(source: .keys(frames: keyFrames, evs: keyFrames.map { scene.ev(at: $0 * interval) })), scene: scene, frames: frames,
                        interval: interval))
            ),
            ("naive", RampSimulation.figures(RampSimulation.runNaive(scene: scene, frames: frames, interval: interval, limits: ExposureLimits(), startEV: 14))),
        ]
        if json {
            let items = rows.map {
                #""\#($0.0)": {"fractionSmooth": \#(fixed($0.1.fractionSmooth, 4)), "p99StepEV": \#(fixed($0.1.p99StepEV, 4)), "maxStepEV": \#(fixed($0.1.maxStepEV, 4)), "maxErrorEV": \#(fixed($0.1.maxErrorEV, 4))}"#
            }
            print("{\"frames\": \(frames), \"intervalSeconds\": \(format(interval)), " + items.joined(separator: ", ") + "}")
            return
        }
        print("sunset EV 14 → −4 in \(format(minutes)) min, \(frames) frames \(format(interval)) s apart, headlights on \(outliers.count) frames")
        print("ramp     ≤0.1 EV steps  p99 step  max step  max error")
        for (name, f) in rows {
            print(
                name.padding(toLength: 9, withPad: " ", startingAt: 0) + percent(f.fractionSmooth, digits: 1).leftPadded(to: 14) + "  "
                    + fixed(f.p99StepEV, 3).leftPadded(to: 8) + "  " + fixed(f.maxStepEV, 3).leftPadded(to: 8) + "  " + fixed(f.maxErrorEV, 3).leftPadded(to: 9)
            )
        }
    }
}

import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigSky

/// `rig bench ramp`: exposure ramps through simulated twilights.
struct BenchRampCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ramp",
        abstract: "Play exposure ramps through simulated twilights and measure their steps, their error and their response.",
        discussion: """
            Scenes: the keyed sunset (EV 14 → −4 in 90 min, headlights on four frames), and the \
            clear-sky dusk at Turin on the September equinox (the sun 8° up to 16° down, over \
            a floor at EV −5, 0.05 EV of sensor noise) alone, with clouds, headlights, a street \
            light, a moonrise, and all of them, drawn from --seed. For each ramp: the share of \
            its own steps (the change of its settings from frame to frame) ≤ 0.1 EV, their 99th \
            percentile and largest; the median distance from the target and the largest once \
            settled (after 5 minutes, and except 5 minutes after a lasting change); and the \
            slowest return within 0.5 EV of the target after a lasting change. auto: the \
            closed loop; planned: keys on the scene (keyed sunset) or the sun ramp (dusks); \
            naive: each frame's settings put the last frame's measure on the target.
            """
    )

    @Option(help: ArgumentHelp("Seconds between frames.", valueName: "s")) var interval = 5.0
    @Option(help: ArgumentHelp("The seed the dusks' events and noise are drawn from.", valueName: "n")) var seed: UInt64 = 1
    @Flag(help: "Print the figures as JSON.") var json = false

    func validate() throws {
        guard (0.5...600).contains(interval) else { throw ValidationError("--interval: valid: 0.5…600 s") }
    }

    struct Scene {
        var name: String
        var scene: SimScene
        var frames: Int
        var plan: ExposureRamp
    }

    func scenes() -> [Scene] {
        let sunsetFrames = Int(5400 / interval)
        let outliers = [sunsetFrames / 5: 3.0, sunsetFrames / 2: 3.0, sunsetFrames / 2 + 1: 2.5, sunsetFrames * 5 / 6: 3.0]
        let sunset = SimScene(keys: SimScene.sunset.keys, outliers: outliers)
        let keyFrames = stride(from: 0, through: sunsetFrames, by: max(1, sunsetFrames / 100)).map(Double.init)
        var out = [
            Scene(
                name: "keyed sunset", scene: sunset, frames: sunsetFrames,
                plan: ExposureRamp(source: .keys(frames: keyFrames, evs: keyFrames.map { sunset.ev(at: $0 * interval) })))
        ]
        let site = Site(latitude: 45.07, longitude: 7.69)
        let kinds: [(String, Set<SimScene.EventKind>)] = [
            ("clear dusk", []), ("clouds", [.clouds]), ("headlights", [.headlights]), ("street light", [.streetLight]), ("moonrise", [.moonrise]),
            ("all", Set(SimScene.EventKind.allCases)),
        ]
        for (name, set) in kinds {
            let (scene, seconds) = SimScene.twilight(site: site, dayUnix: 1_790_035_200, kinds: set, seed: seed)
            guard let sky = scene.sky else { continue }
            // The plan a photographer would make: the dusk's first exposure by day, and the
            // clear sky over the floor with the sun 14° down by night.
            let night = log2(exp2(Sky.clearSkyEV(sunAltitude: ExposureRamp.nightAltitude)) + exp2(sky.floorEV))
            let plan = ExposureRamp(source: .sun(dayEV: scene.trendEV(at: 0), nightEV: night, startUnix: sky.startUnix, site: sky.site))
            out.append(Scene(name: name, scene: scene, frames: Int(seconds / interval), plan: plan))
        }
        return out
    }

    func run() throws {
        var rows: [(scene: String, ramp: String, figures: RampSimulation.Figures)] = []
        for s in scenes() {
            let start = s.scene.trendEV(at: 0)
            let auto = RampSimulation.run(ExposureRamp(source: .auto(targetEV: 0, startEV: start)), scene: s.scene, frames: s.frames, interval: interval)
            let planned = RampSimulation.run(s.plan, scene: s.scene, frames: s.frames, interval: interval)
            let naive = RampSimulation.runNaive(scene: s.scene, frames: s.frames, interval: interval, limits: ExposureLimits(), startEV: start)
            for (name, frames) in [("auto", auto), ("planned", planned), ("naive", naive)] {
                rows.append((s.name, name, RampSimulation.figures(frames, scene: s.scene)))
            }
        }
        if json {
            let items = rows.map { row in
                let f = row.figures
                let response = f.responseSeconds.max().map { format(($0 * 10).rounded() / 10) } ?? "null"
                return
                    #"{"scene": "\#(row.scene)", "ramp": "\#(row.ramp)", "fractionSmooth": \#(fixed(f.fractionSmooth, 4)), "p99StepEV": \#(fixed(f.p99StepEV, 4)), "maxStepEV": \#(fixed(f.maxStepEV, 4)), "medianErrorEV": \#(fixed(f.medianErrorEV, 4)), "maxErrorEV": \#(fixed(f.maxErrorEV, 4)), "responseSeconds": \#(response)}"#
            }
            print("{\"intervalSeconds\": \(format(interval)), \"seed\": \(seed), \"rows\": [" + items.joined(separator: ", ") + "]}")
            return
        }
        print("a frame every \(format(interval)) s; dusks at Turin, 2026-09-22, seed \(seed)")
        print("scene         ramp     ≤0.1 EV  p99 step  max step  median err  max err  response")
        for row in rows {
            let f = row.figures
            let response = f.responseSeconds.max().map { format($0.rounded()) + " s" } ?? "—"
            print(
                row.scene.padded(toLength: 14) + row.ramp.padded(toLength: 7)
                    + percent(f.fractionSmooth, digits: 1).leftPadded(to: 9) + fixed(f.p99StepEV, 3).leftPadded(to: 10)
                    + fixed(f.maxStepEV, 3).leftPadded(to: 10) + fixed(f.medianErrorEV, 3).leftPadded(to: 12) + fixed(f.maxErrorEV, 3).leftPadded(to: 9)
                    + response.leftPadded(to: 10))
        }
    }
}

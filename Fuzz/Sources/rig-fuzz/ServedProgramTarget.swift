import RigCore
import RigFormat

/// Program files dropped into `rig serve --programs DIR`, through exactly what the
/// server's library does with them against the served two-axis rig (`ServedProgram`):
/// parse with the served rig for any path, refuse an embedded rig that is not the served
/// one, plan from the rig's pose, check from a step. Nothing may trap (the server would die
/// mid-move), and whatever is accepted must be laid out on the served rig's axes.
enum ServedProgramTarget {
    static let rigText = RigFileTarget.rigText
    static let served: Rig? = try? RigParser.parse(text: rigText, file: "served.json")

    static func run(_ data: [UInt8]) {
        guard let served else { fuzzFail("the served rig does not parse") }
        guard let text = try? UTF8Text.decode(data, file: "p.json") else { return }
        // The first byte picks the step to start from and the pose the rig stands at.
        let fromStep = Int(data.first ?? 1) % 5
        let pose = served.axes.map { axis in min(max(Double(data.last ?? 0) - 128, axis.softMin), axis.softMax) }
        do {
            let (program, console, report) = try ServedProgram.prepare(
                text: text, file: "p.json", served: served, rigText: rigText, rigPath: "served.json", fromStep: fromStep,
                startPose: pose, maxTicks: RigFileTarget.maxTicks)
            guard program.rig.axes.map(\.name) == served.axes.map(\.name) else { fuzzFail("accepted a program for other axes") }
            switch console.motion {
            case .continuous(let tracks, _):
                guard tracks.count == served.axes.count else { fuzzFail("\(tracks.count) tracks on a \(served.axes.count)-axis rig") }
            case .stepped(let steps):
                for step in steps where step.pose.count != served.axes.count { fuzzFail("a step of \(step.pose.count) axes") }
            }
            if report.feasible, report.unchecked != nil { fuzzFail("feasible without checking every frame") }
        } catch {
            guard error.description.utf8.count < 4000 else { fuzzFail("an error line of \(error.description.utf8.count) bytes") }
        }
    }
}

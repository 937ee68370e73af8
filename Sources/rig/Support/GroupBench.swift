import Dispatch
import FoundationEssentials
import Glibc
import RigFormat
import RigGroup
import RigRuntime
import Synchronization
import SystemPackage

// The parts of `rig bench group`: the broker, the lossy link, an MQTT observer of the
// group's orders and states, one group run (a leader and followers as `rig` processes on
// the simulated rig) and the figures read from the leader's shot log.

/// Debian's mosquitto on a free loopback port (`LoopbackMosquitto`'s configuration, its
/// default logging), started, killed and started again by its PID.
final class BenchBroker {
    let port: Int
    private let directory: String
    private let config: String
    private(set) var child: BenchChild?
    private var starts = 0

    init(directory: String) throws(BenchError) {
        guard LoopbackMosquitto.executable != nil else { throw BenchError(LoopbackMosquitto.missing) }
        guard case .success(let port) = LoopbackTCP.freePort() else { throw BenchError("no free loopback port for the broker") }
        self.port = port
        self.directory = directory
        config = "\(directory)/mosquitto.conf"
        do {
            try LoopbackMosquitto.configuration(port: port, logEverything: false).write(toFile: config, atomically: true, encoding: .utf8)
        } catch { throw BenchError("cannot write \(config): \(error)") }
        try start()
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }

    /// Starts it and waits (polling its log, at most 30 s) until it says it listens.
    func start() throws(BenchError) {
        guard let executable = LoopbackMosquitto.executable else { throw BenchError(LoopbackMosquitto.missing) }
        starts += 1
        let log = "\(directory)/mosquitto-\(starts).log"
        let child = try BenchChild(executable, ["-c", config], output: .file(log))
        self.child = child
        let ready = LoopbackMosquitto.readyLine(port: port)
        let deadline = WallClock.nanoseconds() + 30_000_000_000
        while true {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains(ready) { return }
            if child.poll() || WallClock.nanoseconds() > deadline {
                child.stop(SIGKILL)
                throw BenchError("mosquitto did not listen on port \(port) (\(child.ending)): \(text.suffix(400))")
            }
            SystemThread.sleep(seconds: 0.02)
        }
    }

    /// SIGKILL: gone without a word (its retained messages with it).
    func kill() { child?.stop(SIGKILL) }
    func stop() { child?.stop(SIGTERM) }
    var cpuSeconds: Double { child?.cpuSeconds ?? 0 }
}

/// `Benchmarks/python/lossy_link.py` in front of a local server (`rig bench group`'s broker,
/// `rig bench liveview`'s `rig serve`): the far side connects to it.
final class BenchLossyLink {
    static let scriptName = "lossy_link.py"
    let port: Int
    let child: BenchChild
    let delayMs = 20.0
    let jitterMs = 5.0
    let loss = 0.01
    let rtoMs = 200.0

    struct Stats {
        var chunks = 0
        var held = 0
        var connections = 0
        var delayMsP50 = 0.0
        var delayMsP99 = 0.0
        var delayMsMax = 0.0
    }

    init(script: String, targetPort: Int, seed: Int) throws(BenchError) {
        child = try BenchChild(
            "/usr/bin/env",
            [
                "python3", script, "--target", "127.0.0.1:\(targetPort)", "--delay-ms", number(delayMs), "--jitter-ms", number(jitterMs), "--loss",
                number(loss), "--rto-ms", number(rtoMs), "--seed", String(seed),
            ], output: .pipe, input: true)
        let first = Self.readLine(child.pipe)
        guard let first, first.hasPrefix("listening "), let port = first.split(separator: ":").last.flatMap({ Int($0) }) else {
            child.stop(SIGKILL)
            throw BenchError("\(script) did not say where it listens (is python3 ≥ 3.7 on PATH?): \(first ?? "nothing")")
        }
        self.port = port
    }

    var url: String { "mqtt://127.0.0.1:\(port)" }
    var cpuSeconds: Double { child.cpuSeconds }

    private var finished: Stats??

    /// Ends it (the end of its input) and reads the stats it prints. Once; later calls
    /// return the same.
    func finish() -> Stats? {
        if let finished { return finished }
        try? child.input?.close()
        var stats: Stats?
        defer { finished = .some(stats) }
        while let line = Self.readLine(child.pipe) {
            guard line.hasPrefix("stats ") else { continue }
            var s = Stats()
            for field in line.split(separator: " ").dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { continue }
                switch pair[0] {
                case "chunks": s.chunks = Int(pair[1]) ?? 0
                case "held": s.held = Int(pair[1]) ?? 0
                case "connections": s.connections = Int(pair[1]) ?? 0
                case "delay_ms_p50": s.delayMsP50 = Double(pair[1]) ?? 0
                case "delay_ms_p99": s.delayMsP99 = Double(pair[1]) ?? 0
                case "delay_ms_max": s.delayMsMax = Double(pair[1]) ?? 0
                default: break
                }
            }
            stats = s
        }
        child.stop(SIGTERM)
        return stats
    }

    /// One line from `pipe` (a byte at a time: the script writes a few short lines), nil at its end.
    private static func readLine(_ pipe: FileDescriptor?) -> String? {
        guard let pipe else { return nil }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = (try? withUnsafeMutableBytes(of: &byte) { try pipe.read(into: $0, retryOnInterrupt: true) }) ?? 0
            if n <= 0 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }
}

/// What an MQTT client of the group's broker sees, each message stamped with the wall clock
/// (the group's timeline) when it arrived: the leader's orders, its states (running, paused
/// and who is missing) and, when asked, each rig's state (its will's `lost` included).
final class GroupObserver: Sendable {
    struct Order {
        var step: Int
        var atNs: Int64
        var rigs: [String]
        var seenNs: Int64
        /// The message expiry left when it arrived (MQTT 5), in seconds.
        var expirySeconds: UInt32?
    }

    struct LeaderSeen {
        var state: String
        var missing: [String]
        var seenNs: Int64
    }

    struct RigSeen {
        var rig: String
        var state: String
        var lastShot: Int?
        var seenNs: Int64
    }

    struct Seen: Sendable {
        var orders: [Order] = []
        var leader: [LeaderSeen] = []
        var rigs: [RigSeen] = []
        var connected = false
    }

    private final class Record: Sendable {
        let seen = Mutex(Seen())
        let arrived = DispatchSemaphore(value: 0)
    }

    private let record = Record()
    private let client: MQTTClient

    /// Subscribes to `group`'s orders and leader state, and to every rig's state with `rigStates`.
    init(port: Int, group: String, rigStates: Bool) throws(BenchError) {
        let topics = GroupTopics(group: group)
        let record = self.record
        do {
            client = try MQTTClient(
                clientID: "rig-bench-observer-\(getpid())-\(group)", address: BrokerAddress(host: "127.0.0.1", port: port), credentials: BrokerCredentials(),
                will: nil
            ) { event in
                let now = WallClock.nanoseconds()
                record.seen.withLock { seen in
                    switch event {
                    case .connected: seen.connected = true
                    case .disconnected: seen.connected = false
                    case .message(let message):
                        let data = Data(message.payload)
                        switch topics.classify(message.topic) {
                        case .step:
                            if let order = try? JSONDecoder().decode(StepOrder.self, from: data) {
                                seen.orders.append(
                                    Order(step: order.step, atNs: order.atNs, rigs: order.rigs, seenNs: now, expirySeconds: message.expirySeconds))
                            }
                        case .leaderState:
                            if let state = try? JSONDecoder().decode(LeaderState.self, from: data) {
                                seen.leader.append(LeaderSeen(state: state.state, missing: state.missing, seenNs: now))
                            }
                        case .rigState(let rig):
                            if let state = try? JSONDecoder().decode(RigState.self, from: data) {
                                seen.rigs.append(RigSeen(rig: rig, state: state.state, lastShot: state.lastShot?.step, seenNs: now))
                            }
                        default: break
                        }
                    }
                }
                record.arrived.signal()
            }
        } catch { throw BenchError("the observer's MQTT client: \(error)") }
        client.subscribe(topics.step)
        client.subscribe(topics.leaderState)
        if rigStates { client.subscribe(topics.state("+")) }
        do { try client.start() } catch { throw BenchError("the observer's MQTT client: \(error)") }
    }

    var seen: Seen { record.seen.withLock { $0 } }

    /// Waits until `done` holds for what was seen (woken by each message), `seconds` passed
    /// or `alive` turned false (checked every 0.1 s); what was seen when `done` held, else nil.
    func wait(within seconds: Double, alive: () -> Bool = { true }, until done: (Seen) -> Bool) -> Seen? {
        let deadline = WallClock.nanoseconds() + Int64(seconds * 1e9)
        while true {
            let now = seen
            if done(now) { return now }
            guard alive(), WallClock.nanoseconds() < deadline else { return nil }
            _ = record.arrived.wait(timeout: .now() + 0.1)
        }
    }

    func close() { client.close() }
}

/// One group on the bench: a leader and followers as `rig` processes on the simulated rig
/// (each its own state folder and output file), a generated program of `steps` steps, and
/// an observer on the broker.
final class GroupBenchRun {
    struct Setup {
        var executable: String
        var directory: String
        var group: String
        var rigs: Int
        var steps: Int
        var leadSeconds: Double
        /// Where the leader connects (the broker) and where the followers do (the broker or the link).
        var leaderURL: String
        var followerURL: String
        var brokerPort: Int
        var realtime: Bool
        var observeRigStates: Bool
        /// The program's interval (the leader paces the group by it), or nil: as fast as it goes.
        var intervalSeconds: Double? = nil
    }

    let setup: Setup
    let followerNames: [String]
    let observer: GroupObserver
    private(set) var leader: BenchChild?
    private(set) var followers: [String: BenchChild] = [:]
    /// Every output file of each rig's processes (a restarted follower has several), in order.
    private(set) var outputs: [String: [String]] = [:]
    var leaderLog: String { "\(setup.directory)/lead.jsonl" }
    static let leaderName = "lead"

    init(_ setup: Setup) throws(BenchError) {
        self.setup = setup
        followerNames = (1..<setup.rigs).map { "f\($0)" }
        do {
            try FileManager.default.createDirectory(atPath: setup.directory, withIntermediateDirectories: true)
            try BenchProgram.groupSteps(setup.steps, rateHz: 100, intervalSeconds: setup.intervalSeconds).write(
                toFile: "\(setup.directory)/program.json", atomically: true, encoding: .utf8)
        } catch { throw BenchError("cannot write the group's program in \(setup.directory): \(error)") }
        observer = try GroupObserver(port: setup.brokerPort, group: setup.group, rigStates: setup.observeRigStates)
    }

    private var program: String { "\(setup.directory)/program.json" }

    /// The followers first, then the leader (which waits for them), as on a real shoot.
    func start() throws(BenchError) {
        for name in followerNames { try startFollower(name) }
        try startLeader()
    }

    @discardableResult
    func startFollower(_ name: String) throws(BenchError) -> Int64 {
        let spawned = WallClock.nanoseconds()
        followers[name] = try spawn(
            name, ["follow", program, "--broker", setup.followerURL, "--group", setup.group, "--name", name, "--leader", Self.leaderName])
        return spawned
    }

    private func startLeader() throws(BenchError) {
        leader = try spawn(
            Self.leaderName,
            [
                "play", program, "--lead", setup.leaderURL, "--group", setup.group, "--followers", followerNames.joined(separator: ","), "--name",
                Self.leaderName, "--lead-time", number(setup.leadSeconds), "--log", leaderLog, "--wait-followers", "120",
            ])
    }

    private func spawn(_ name: String, _ arguments: [String]) throws(BenchError) -> BenchChild {
        let output = "\(setup.directory)/\(name)-\((outputs[name]?.count ?? 0) + 1).log"
        outputs[name, default: []].append(output)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = "\(setup.directory)/state-\(name)"
        // Every rig runs on this machine's one clock: their offset from each other is 0 by
        // construction (and chrony, which may not even run here, is not asked).
        environment["RIG_TEST_CLOCK_OFFSET_NS"] = "0"
        return try BenchChild(setup.executable, arguments + (setup.realtime ? [] : ["--no-realtime"]), environment: environment, output: .file(output))
    }

    /// SIGKILL to a follower; when it was sent (wall clock ns).
    func kill(_ name: String) -> Int64 {
        let now = WallClock.nanoseconds()
        followers[name]?.stop(SIGKILL)
        return now
    }

    var leaderAlive: Bool { !(leader?.poll() ?? true) }

    /// Waits for what `done` says (see `GroupObserver.wait`); an error naming `what` when it
    /// did not come within `seconds` or the leader ended first.
    func expect(_ what: String, within seconds: Double = 120, until done: (GroupObserver.Seen) -> Bool) throws(BenchError) -> GroupObserver.Seen {
        if let seen = observer.wait(within: seconds, alive: { leaderAlive }, until: done) { return seen }
        throw BenchError("\(setup.group): \(what) did not come within \(Int(seconds)) s (leader: \(leader?.ending ?? "not started")); \(tail(Self.leaderName))")
    }

    /// Waits for the leader's end (it must exit 0), then every follower's.
    func waitForEnd() throws(BenchError) {
        let seconds = 120 + Double(setup.steps) * (setup.leadSeconds + 3)
        let deadline = WallClock.nanoseconds() + Int64(seconds * 1e9)
        while leaderAlive {
            guard WallClock.nanoseconds() < deadline else {
                throw BenchError("\(setup.group): the leader did not end within \(Int(seconds)) s; \(tail(Self.leaderName))")
            }
            SystemThread.sleep(seconds: 0.1)
        }
        guard leader?.exitedCleanly == true else {
            throw BenchError("\(setup.group): the leader ended with \(leader?.ending ?? "?"); \(tail(Self.leaderName))")
        }
        let followersDeadline = WallClock.nanoseconds() + 60_000_000_000
        for (name, follower) in followers.sorted(by: { $0.key < $1.key }) {
            while !follower.poll(), WallClock.nanoseconds() < followersDeadline { SystemThread.sleep(seconds: 0.05) }
            guard follower.exitedCleanly else {
                throw BenchError("\(setup.group): follower \(name) ended with \(follower.ending); \(tail(name))")
            }
        }
    }

    /// Ends whatever still runs (SIGKILL) and the observer.
    func close() {
        leader?.stop(SIGKILL)
        for follower in followers.values { follower.stop(SIGKILL) }
        observer.close()
    }

    /// The CPU seconds of every rig process running now, by name.
    var cpuSeconds: [String: Double] {
        var result = [Self.leaderName: leader?.cpuSeconds ?? 0]
        for (name, follower) in followers { result[name] = follower.cpuSeconds }
        return result
    }

    /// What every process of `rig` wrote.
    func text(_ rig: String) -> String {
        (outputs[rig] ?? []).map { (try? String(contentsOfFile: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n")
    }

    private func tail(_ rig: String) -> String {
        "its last lines (\(outputs[rig]?.last ?? "no output")):\n" + text(rig).split(separator: "\n").suffix(8).joined(separator: "\n")
    }

    /// Every rig's frames in the leader's shot log; an error when the leader did not shoot
    /// every step (it ended early: stopped, or a fault).
    func frames() throws(BenchError) -> [GroupFigures.Frame] {
        guard let text = try? String(contentsOfFile: leaderLog, encoding: .utf8) else { throw BenchError("no shot log at \(leaderLog)") }
        let frames = GroupFigures.frames(log: text, leader: Self.leaderName)
        let own = Set(frames.filter { $0.rig == Self.leaderName }.map(\.step)).count
        guard own == setup.steps else {
            throw BenchError("\(setup.group): the leader shot \(own) of \(setup.steps) steps and ended; \(tail(Self.leaderName))")
        }
        return frames
    }

    /// Each step (0-based) this follower fired, as often as it fired it: its own log's
    /// "step K shot at" lines, over all its processes.
    func ownTriggers(_ rig: String) -> [Int] {
        let marker = "group \(setup.group): step "
        return text(rig).split(separator: "\n").compactMap { line in
            guard let range = line.firstRange(of: marker), line.contains(" shot at ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber }).map { $0 - 1 }
        }
    }

    /// How many orders this follower ignored as expired (its log says so for each).
    func expiredRefusals(_ rig: String) -> Int {
        text(rig).split(separator: "\n").filter { $0.contains("ignored the order for step") && $0.contains("expired") }.count
    }
}

/// The figures of one group run, from the leader's shot log and the observed orders.
enum GroupFigures {
    struct Frame {
        var rig: String
        /// 0-based.
        var step: Int
        var edgeNs: Int64
    }

    private struct LogLine: Decodable {
        var event: String?
        var rig: String?
        var step: Int?
        var edgeNs: Int64?
    }

    /// The `shot` events with an edge (the leader's own frames under `leader`).
    static func frames(log: String, leader: String) -> [Frame] {
        let decoder = JSONDecoder()
        return log.split(separator: "\n").compactMap { line in
            guard let l = try? decoder.decode(LogLine.self, from: Data(line.utf8)), l.event == "shot", let step = l.step, let edge = l.edgeNs else {
                return nil
            }
            return Frame(rig: l.rig ?? leader, step: step - 1, edgeNs: edge)
        }
    }

    /// The order a rig fired a frame on: the last one seen before its edge for that step and rig.
    static func order(for frame: Frame, in orders: [GroupObserver.Order]) -> GroupObserver.Order? {
        orders.last { $0.step == frame.step && $0.rigs.contains(frame.rig) && $0.seenNs <= frame.edgeNs }
    }

    /// Per step shot by every rig on one order: max − min of the rigs' edges (ns). Steps a
    /// rig shot on an order of its own (after it came back) are not a skew: counted apart.
    static func skews(_ frames: [Frame], orders: [GroupObserver.Order], rigs: [String]) -> (skews: [Int64], split: Int) {
        var byStep: [Int: [Frame]] = [:]
        for frame in frames { byStep[frame.step, default: []].append(frame) }
        var skews: [Int64] = []
        var split = 0
        for (_, shot) in byStep.sorted(by: { $0.key < $1.key }) {
            // Every rig's frame on one order (the same time) for all of them.
            let fired = shot.map { order(for: $0, in: orders) }
            let together = fired.first.flatMap { $0 }.map { first in Set(first.rigs) == Set(rigs) && fired.allSatisfy { $0?.atNs == first.atNs } } ?? false
            guard Set(shot.map(\.rig)) == Set(rigs), shot.count == rigs.count, together else {
                split += 1
                continue
            }
            let edges = shot.map(\.edgeNs)
            skews.append((edges.max() ?? 0) - (edges.min() ?? 0))
        }
        return (skews, split)
    }

    /// Each frame's edge after its order's time (ns), by rig.
    static func lateness(_ frames: [Frame], orders: [GroupObserver.Order]) -> [String: [Int64]] {
        var result: [String: [Int64]] = [:]
        for frame in frames {
            guard let order = order(for: frame, in: orders) else { continue }
            result[frame.rig, default: []].append(frame.edgeNs - order.atNs)
        }
        return result
    }

    /// Frames whose edge came after their order's message expired: the broker's arrival of
    /// the order (as the observer saw it) plus the expiry it carried. Frames whose order
    /// was not seen are counted in `unmatched`.
    static func afterExpiry(_ frames: [Frame], orders: [GroupObserver.Order]) -> (count: Int, unmatched: Int) {
        var count = 0
        var unmatched = 0
        for frame in frames {
            guard let order = order(for: frame, in: orders), let expiry = order.expirySeconds else {
                unmatched += 1
                continue
            }
            if frame.edgeNs > order.seenNs + Int64(expiry) * 1_000_000_000 { count += 1 }
        }
        return (count, unmatched)
    }

    /// Over every rig: steps a rig has more than once, and steps of 0..<steps it lacks.
    static func twiceAndSkipped(_ steps: [String: [Int]], count: Int) -> (twice: Int, skipped: Int) {
        var twice = 0
        var skipped = 0
        for list in steps.values {
            var seen: [Int: Int] = [:]
            for step in list { seen[step, default: 0] += 1 }
            twice += seen.values.filter { $0 > 1 }.count
            skipped += (0..<count).filter { seen[$0] == nil }.count
        }
        return (twice, skipped)
    }

    /// The nearest-rank percentile of `values` (sorted here), NaN for none.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = max(1, Int((Double(sorted.count) * fraction).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
    }

    /// The median of `values`, NaN for none.
    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }
}

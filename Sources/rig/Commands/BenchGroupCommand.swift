import ArgumentParser
import FoundationEssentials
import Glibc
import RigFormat
import RigGroup
import RigRuntime

/// `rig bench group`: a group of rigs through Debian's mosquitto on this machine, measured.
struct BenchGroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Measure a group of rigs over MQTT: trigger-edge skew, faults (a follower killed, the broker restarted) and CPU.",
        discussion: """
            Starts Debian's mosquitto on a free loopback port and --rigs `rig` processes on the \
            simulated rig (a leader, `rig play --lead`, and followers, `rig follow`), each playing \
            a generated stepped program of short steps, and an MQTT observer that stamps the \
            leader's orders and states and the rigs' states as they arrive. Then, in one run \
            (--runs picks some): \
            skew: --steps steps; per step the spread of the rigs' trigger edges (max − min, from \
            the leader's shot log), p50/p99/max; each edge after its ordered time; edges after \
            their order's message expiry. \
            kill: --fault-steps steps; follower f1 killed with SIGKILL between steps and restarted, \
            then again with an order in flight: when the group stopped triggering, when the \
            leader said it paused, when it resumed once f1 was back. \
            broker: --fault-steps steps; the broker killed and restarted with an order in flight. \
            cpu: --cpu-steps steps at one step per second (the program's interval:1, which the \
            leader paces the group by); the broker's and each rig's CPU (user + system, /proc) \
            over the steps. \
            Every run counts steps shot twice or skipped, from the leader's log and from each \
            follower's own. --link lossy puts Benchmarks/python/lossy_link.py between the \
            followers and the broker: each chunk 20 ± 5 ms late, 1 % held back one 200 ms \
            retransmission timeout. docs/performance.md has the figures.
            """
    )

    @Option(help: ArgumentHelp("Rigs in the group, the leader included (2–16).", valueName: "n"))
    var rigs = 4

    @Option(help: ArgumentHelp("Steps of the skew run (10–10000).", valueName: "n"))
    var steps = 200

    @Option(help: ArgumentHelp("Steps of the kill and broker runs (12–1000).", valueName: "n"))
    var faultSteps = 40

    @Option(help: ArgumentHelp("Steps of the CPU run (5–10000).", valueName: "n"))
    var cpuSteps = 60

    @Option(help: ArgumentHelp("The leader's --lead-time in the skew and fault runs (0.2–60 s).", valueName: "s"))
    var leadTime = 0.5

    @Option(help: ArgumentHelp("Between the followers and the broker: loopback, or lossy (20 ± 5 ms, 1 % held 200 ms).", valueName: "link"))
    var link = "loopback"

    @Option(help: ArgumentHelp("Which runs, comma-separated: skew, kill, broker, cpu.", valueName: "runs"))
    var runs = "skew,kill,broker,cpu"

    @Option(help: ArgumentHelp("With --link lossy: the proxy script (default: found like the Python loop).", valueName: "path"))
    var linkScript: String?

    @Option(help: ArgumentHelp("Keep every file (programs, logs, shot logs) in this folder (default: a temporary one, removed).", valueName: "dir"))
    var workDir: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Flag(help: "Pass --no-realtime to every rig.")
    var noRealtime = false

    private static let allRuns = ["skew", "kill", "broker", "cpu"]
    private var chosen: [String] { runs.split(separator: ",").map { String($0).trimmed() } }

    func validate() throws {
        guard (2...16).contains(rigs) else { throw ValidationError("--rigs \(rigs): valid: 2…16") }
        guard (10...10000).contains(steps) else { throw ValidationError("--steps \(steps): valid: 10…10000") }
        guard (12...1000).contains(faultSteps) else { throw ValidationError("--fault-steps \(faultSteps): valid: 12…1000") }
        guard (5...10000).contains(cpuSteps) else { throw ValidationError("--cpu-steps \(cpuSteps): valid: 5…10000") }
        guard (0.2...60).contains(leadTime) else { throw ValidationError("--lead-time \(format(leadTime)): valid: 0.2…60 s") }
        guard link == "loopback" || link == "lossy" else { throw ValidationError("--link \(link): valid: loopback, lossy") }
        if linkScript != nil, link != "lossy" { throw ValidationError("--link-script needs --link lossy") }
        guard !chosen.isEmpty, chosen.allSatisfy(Self.allRuns.contains) else {
            throw ValidationError("--runs \(runs): valid: some of \(Self.allRuns.joined(separator: ", ")), comma-separated")
        }
    }

    func run() throws {
        let directory = workDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("rig-bench-group-\(getpid())").path
        var keep = workDir != nil
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let report = try measure(in: directory)
            if json { print(report.json) } else { for line in report.lines { print(line) } }
        } catch let error as BenchError {
            keep = true
            printError("error: \(error)")
            printError("(every rig's output and the shot logs are in \(directory))")
            throw ExitCode(1)
        }
    }

    private func measure(in directory: String) throws(BenchError) -> GroupBenchReport {
        let script = link == "lossy" ? try locateBenchmarkFile("python/\(BenchLossyLink.scriptName)", explicit: linkScript, option: "--link-script") : nil
        let broker = try BenchBroker(directory: directory)
        defer { broker.stop() }
        let lossy = try script.map { s throws(BenchError) in try BenchLossyLink(script: s, targetPort: broker.port, seed: 1) }
        defer { _ = lossy?.finish() }
        var report = GroupBenchReport(
            rigs: rigs, link: link, leadSeconds: leadTime, realtime: !noRealtime, cpus: ProcessInfo.processInfo.activeProcessorCount,
            loadBefore: BenchStartupCommand.loadAverage())
        func setup(_ group: String, steps: Int, lead: Double, rigStates: Bool) -> GroupBenchRun.Setup {
            GroupBenchRun.Setup(
                executable: runningExecutablePath(), directory: "\(directory)/\(group)", group: group, rigs: rigs, steps: steps, leadSeconds: lead,
                leaderURL: broker.url, followerURL: lossy?.url ?? broker.url, brokerPort: broker.port, realtime: !noRealtime,
                observeRigStates: rigStates)
        }
        if chosen.contains("skew") {
            report.skew = try skewRun(setup("bench-skew", steps: steps, lead: leadTime, rigStates: false))
        }
        if chosen.contains("kill") {
            report.kill = try killRun(setup("bench-kill", steps: faultSteps, lead: leadTime, rigStates: true))
        }
        if chosen.contains("broker") {
            report.broker = try brokerRun(setup("bench-broker", steps: faultSteps, lead: leadTime, rigStates: true), broker: broker)
        }
        if chosen.contains("cpu") {
            // One step a second: the leader paces the group by its program's interval (a
            // short lead time, so that a step's move, settle and messages fit in it).
            var cpuSetup = setup("bench-cpu", steps: cpuSteps, lead: min(leadTime, 0.3), rigStates: false)
            cpuSetup.intervalSeconds = 1
            report.cpu = try cpuRun(cpuSetup, broker: broker, link: lossy)
        }
        report.linkStats = lossy?.finish()
        report.loadAfter = BenchStartupCommand.loadAverage()
        return report
    }

    // MARK: - Runs

    private func skewRun(_ setup: GroupBenchRun.Setup) throws(BenchError) -> GroupBenchReport.Skew {
        let run = try GroupBenchRun(setup)
        defer { run.close() }
        try run.start()
        try run.waitForEnd()
        let frames = try run.frames()
        let orders = run.observer.seen.orders
        let rigNames = [GroupBenchRun.leaderName] + run.followerNames
        let (skews, split) = GroupFigures.skews(frames, orders: orders, rigs: rigNames)
        let intervals = zip(orders, orders.dropFirst()).filter { $0.1.step == $0.0.step + 1 }.map { Double($0.1.atNs - $0.0.atNs) / 1e9 }
        return GroupBenchReport.Skew(
            steps: setup.steps, skewsMs: skews.map { Double($0) / 1e6 }, splitSteps: split,
            latenessMs: GroupFigures.lateness(frames, orders: orders).mapValues { $0.map { Double($0) / 1e6 } },
            intervalSeconds: GroupFigures.median(intervals), integrity: integrity(run, frames: frames, orders: orders))
    }

    private func killRun(_ setup: GroupBenchRun.Setup) throws(BenchError) -> GroupBenchReport.Faults {
        let run = try GroupBenchRun(setup)
        defer { run.close() }
        try run.start()
        let rig = run.followerNames[0]
        var kills: [GroupBenchReport.Kill] = []
        // Between steps: right after its shot at a step (its state says so).
        let first = setup.steps / 4
        _ = try run.expect("\(rig)'s shot at step \(first + 1)") { seen in seen.rigs.contains { $0.rig == rig && ($0.lastShot ?? -1) >= first } }
        kills.append(try killAndReturn(run, rig: rig, when: "between steps (after its shot at step \(first + 1))"))
        // With an order in flight: as soon as the order for a step is out, before its time.
        let second = setup.steps / 2
        _ = try run.expect("the order for step \(second + 1)") { seen in seen.orders.contains { $0.step >= second && $0.rigs.contains(rig) } }
        kills.append(try killAndReturn(run, rig: rig, when: "with an order in flight (step \(second + 1))"))
        try run.waitForEnd()
        let frames = try run.frames()
        return GroupBenchReport.Faults(steps: setup.steps, kills: kills, integrity: integrity(run, frames: frames, orders: run.observer.seen.orders))
    }

    /// Kills `rig` now, waits until the leader says it paused for it, starts it again and
    /// waits until the group shoots again.
    private func killAndReturn(_ run: GroupBenchRun, rig: String, when: String) throws(BenchError) -> GroupBenchReport.Kill {
        let killed = run.kill(rig)
        let paused = try run.expect("the leader's pause for \(rig)") { seen in
            seen.leader.contains { $0.seenNs >= killed && $0.state == "paused" && $0.missing.contains(rig) }
        }
        let spawned = try run.startFollower(rig)
        let backSeen = try run.expect("\(rig) back") { seen in seen.rigs.contains { $0.rig == rig && $0.seenNs >= spawned && $0.state != "lost" } }
        let back = backSeen.rigs.first { $0.rig == rig && $0.seenNs >= spawned && $0.state != "lost" }?.seenNs ?? spawned
        let resumedSeen = try run.expect("the leader's resume") { seen in
            seen.leader.contains { $0.seenNs >= back && $0.state == "running" && !$0.missing.contains(rig) }
        }
        let nextSeen = try run.expect("the next order after \(rig) came back") { seen in seen.orders.contains { $0.seenNs >= back } }
        let orders = nextSeen.orders
        let ms = { (ns: Int64) in Double(ns) / 1e6 }
        let will = paused.rigs.first { $0.rig == rig && $0.seenNs >= killed && $0.state == "lost" }?.seenNs
        let pausedAt = paused.leader.first { $0.seenNs >= killed && $0.state == "paused" && $0.missing.contains(rig) }?.seenNs ?? killed
        let resumed = resumedSeen.leader.first { $0.seenNs >= back && $0.state == "running" && !$0.missing.contains(rig) }?.seenNs ?? back
        let next = orders.first { $0.seenNs >= back }
        return GroupBenchReport.Kill(
            when: when, willMs: will.map { ms($0 - killed) },
            lastTriggerMs: orders.filter { $0.seenNs < killed && $0.atNs > killed }.map(\.atNs).max().map { ms($0 - killed) },
            ordersWhileMissing: orders.filter { $0.seenNs > killed && $0.seenNs < back }.count, saidPausedMs: ms(pausedAt - killed),
            returnSeconds: ms(back - spawned) / 1000, resumedMs: ms(resumed - back), nextOrderMs: next.map { ms($0.seenNs - back) },
            nextTriggerMs: next.map { ms($0.atNs - back) })
    }

    private func brokerRun(_ setup: GroupBenchRun.Setup, broker: BenchBroker) throws(BenchError) -> GroupBenchReport.BrokerRestart {
        let run = try GroupBenchRun(setup)
        defer { run.close() }
        try run.start()
        let step = setup.steps / 4
        _ = try run.expect("the order for step \(step + 1)") { seen in seen.orders.contains { $0.step >= step } }
        let killed = WallClock.nanoseconds()
        broker.kill()
        try broker.start()
        let ready = WallClock.nanoseconds()
        let after = try run.expect("an order after the broker's restart") { seen in seen.orders.contains { $0.seenNs > ready } }
        let next = after.orders.first { $0.seenNs > ready }?.seenNs ?? ready
        try run.waitForEnd()
        let frames = try run.frames()
        return GroupBenchReport.BrokerRestart(
            steps: setup.steps, step: step + 1, downMs: Double(ready - killed) / 1e6, nextOrderSeconds: Double(next - killed) / 1e9,
            integrity: integrity(run, frames: frames, orders: run.observer.seen.orders))
    }

    private func cpuRun(_ setup: GroupBenchRun.Setup, broker: BenchBroker, link: BenchLossyLink?) throws(BenchError) -> GroupBenchReport.CPU {
        let run = try GroupBenchRun(setup)
        defer { run.close() }
        try run.start()
        // From the order for step 2 (the rigs have left home and made their first step) to
        // the order for the last step.
        let first = 1
        let last = setup.steps - 1
        let start = try run.expect("the order for step \(first + 1)") { seen in seen.orders.contains { $0.step >= first } }
        let startNs = start.orders.first { $0.step >= first }?.seenNs ?? WallClock.nanoseconds()
        let rigsBefore = run.cpuSeconds
        let brokerBefore = broker.cpuSeconds
        let linkBefore = link?.cpuSeconds ?? 0
        let end = try run.expect("the order for step \(last + 1)", within: 120 + Double(setup.steps) * 5) { seen in
            seen.orders.contains { $0.step >= last }
        }
        let rigsAfter = run.cpuSeconds
        let brokerAfter = broker.cpuSeconds
        let linkAfter = link?.cpuSeconds ?? 0
        let endNs = end.orders.first { $0.step >= last }?.seenNs ?? WallClock.nanoseconds()
        try run.waitForEnd()
        let seconds = Double(endNs - startNs) / 1e9
        let stepsInWindow = Double(last - first)
        return GroupBenchReport.CPU(
            steps: setup.steps, leadSeconds: setup.leadSeconds, stepsPerSecond: stepsInWindow / seconds, seconds: seconds,
            broker: (brokerAfter - brokerBefore) / seconds,
            rigs: rigsAfter.reduce(into: [:]) { result, entry in result[entry.key] = (entry.value - (rigsBefore[entry.key] ?? 0)) / seconds },
            link: link.map { _ in (linkAfter - linkBefore) / seconds })
    }

    /// Steps shot twice or skipped (the leader's log; each follower's own triggers), edges
    /// after their order's expiry, orders refused as expired.
    private func integrity(_ run: GroupBenchRun, frames: [GroupFigures.Frame], orders: [GroupObserver.Order]) -> GroupBenchReport.Integrity {
        var logged: [String: [Int]] = [GroupBenchRun.leaderName: []]
        for name in run.followerNames { logged[name] = [] }
        for frame in frames { logged[frame.rig, default: []].append(frame.step) }
        let own = Dictionary(uniqueKeysWithValues: run.followerNames.map { ($0, run.ownTriggers($0)) })
        let (twice, skipped) = GroupFigures.twiceAndSkipped(logged, count: run.setup.steps)
        let (ownTwice, ownSkipped) = GroupFigures.twiceAndSkipped(own, count: run.setup.steps)
        let (late, unmatched) = GroupFigures.afterExpiry(frames, orders: orders)
        return GroupBenchReport.Integrity(
            frames: frames.count, twice: twice, skipped: skipped, ownTwice: ownTwice, ownSkipped: ownSkipped, afterExpiry: late, unmatched: unmatched,
            refusedExpired: run.followerNames.map(run.expiredRefusals).reduce(0, +))
    }
}

/// What `rig bench group` measured, as text or JSON.
struct GroupBenchReport {
    struct Integrity {
        var frames: Int
        var twice: Int
        var skipped: Int
        var ownTwice: Int
        var ownSkipped: Int
        var afterExpiry: Int
        var unmatched: Int
        var refusedExpired: Int

        var line: String {
            "steps shot twice \(twice), skipped \(skipped) (leader's log, every rig); by the followers' own triggers: twice \(ownTwice), skipped \(ownSkipped); "
                + "triggers after their order's expiry \(afterExpiry) of \(frames - unmatched)\(unmatched > 0 ? " (\(unmatched) whose order the observer missed)" : ""); "
                + "orders refused as expired \(refusedExpired)"
        }

        var json: String {
            "{\"frames\": \(frames), \"twice\": \(twice), \"skipped\": \(skipped), \"own_twice\": \(ownTwice), \"own_skipped\": \(ownSkipped), "
                + "\"after_expiry\": \(afterExpiry), \"order_unseen\": \(unmatched), \"refused_expired\": \(refusedExpired)}"
        }
    }

    struct Skew {
        var steps: Int
        var skewsMs: [Double]
        var splitSteps: Int
        var latenessMs: [String: [Double]]
        var intervalSeconds: Double
        var integrity: Integrity
    }

    struct Kill {
        var when: String
        var willMs: Double?
        /// The group's last trigger after the death (an order already out), nil for none.
        var lastTriggerMs: Double?
        var ordersWhileMissing: Int
        var saidPausedMs: Double
        var returnSeconds: Double
        var resumedMs: Double
        var nextOrderMs: Double?
        var nextTriggerMs: Double?
    }

    struct Faults {
        var steps: Int
        var kills: [Kill]
        var integrity: Integrity
    }

    struct BrokerRestart {
        var steps: Int
        var step: Int
        var downMs: Double
        var nextOrderSeconds: Double
        var integrity: Integrity
    }

    struct CPU {
        var steps: Int
        var leadSeconds: Double
        var stepsPerSecond: Double
        var seconds: Double
        /// Shares of one core.
        var broker: Double
        var rigs: [String: Double]
        var link: Double?
    }

    var rigs: Int
    var link: String
    var leadSeconds: Double
    var realtime: Bool
    var cpus: Int
    var loadBefore: Double
    var loadAfter = Double.nan
    var skew: Skew?
    var kill: Faults?
    var broker: BrokerRestart?
    var cpu: CPU?
    var linkStats: BenchLossyLink.Stats?

    private static func ms(_ value: Double?) -> String { value.map { fixed($0, 3) + " ms" } ?? "—" }
    private static func spread(_ values: [Double]) -> (p50: Double, p99: Double, max: Double) {
        (GroupFigures.percentile(values, 0.5), GroupFigures.percentile(values, 0.99), values.max() ?? .nan)
    }
    private var rigNames: [String] { [GroupBenchRun.leaderName] + (1..<rigs).map { "f\($0)" } }

    var lines: [String] {
        var out: [String] = []
        let linkText = link == "lossy" ? "followers through the lossy link (20 ± 5 ms each way, 1 % held 200 ms)" : "every rig on loopback"
        out.append("rig bench group: \(rigs) rigs (\(rigNames.joined(separator: ", "))) on the simulated rig, \(linkText)")
        out.append(
            "\(realtime ? "real-time asked for" : "--no-realtime"); one machine, one clock; \(cpus) CPUs, load average \(rounded(loadBefore)) before, \(rounded(loadAfter)) after"
        )
        if let s = skew {
            let (p50, p99, max) = Self.spread(s.skewsMs)
            out.append("")
            out.append("skew: \(s.steps) steps, lead time \(format(leadSeconds)) s, a step every \(fixed(s.intervalSeconds, 3)) s (median)")
            out.append(
                "  trigger-edge skew per step (max − min of the \(rigs) rigs' edges), \(s.skewsMs.count) steps: p50 \(Self.ms(p50)), p99 \(Self.ms(p99)), max \(Self.ms(max))"
                    + (s.splitSteps > 0 ? "; \(s.splitSteps) steps not shot together" : ""))
            for name in rigNames {
                let (l50, l99, lmax) = Self.spread(s.latenessMs[name] ?? [])
                out.append("  edge after the ordered time, \(name.padded(toLength: 4)): p50 \(Self.ms(l50)), p99 \(Self.ms(l99)), max \(Self.ms(lmax))")
            }
            out.append("  " + s.integrity.line)
        }
        if let k = kill {
            out.append("")
            out.append("kill: \(k.steps) steps; f1 killed with SIGKILL and started again, twice")
            for kill in k.kills {
                out.append("  \(kill.when):")
                out.append(
                    "    its will reached the observer after \(Self.ms(kill.willMs)); the group's last trigger after the kill: \(kill.lastTriggerMs.map { "+" + Self.ms($0) + " (an order already out)" } ?? "none")"
                )
                out.append(
                    "    orders while f1 was missing: \(kill.ordersWhileMissing); the leader said \"paused, waiting for f1\" after \(Self.ms(kill.saidPausedMs))"
                )
                out.append(
                    "    f1 back \(fixed(kill.returnSeconds, 2)) s after its restart; the leader resumed \(Self.ms(kill.resumedMs)) after, ordered the next step \(Self.ms(kill.nextOrderMs)) after (its time: \(Self.ms(kill.nextTriggerMs)) after)"
                )
            }
            out.append("  " + k.integrity.line)
        }
        if let b = broker {
            out.append("")
            out.append("broker: \(b.steps) steps; the broker killed with SIGKILL once the order for step \(b.step) was out, and started again")
            out.append(
                "  listening again after \(Self.ms(b.downMs)); the next step ordered \(fixed(b.nextOrderSeconds, 2)) s after the kill (the rigs reconnect every 1–2 s)"
            )
            out.append("  " + b.integrity.line)
        }
        if let c = cpu {
            out.append("")
            out.append(
                "cpu: \(c.steps) steps, lead time \(fixed(c.leadSeconds, 3)) s: \(fixed(c.stepsPerSecond, 3)) steps/s over \(fixed(c.seconds, 1)) s (user + system, share of one core)"
            )
            out.append("  broker \(percent(c.broker, digits: 2)) (\(percent(c.broker / Double(rigs), digits: 2)) per rig)")
            for name in rigNames { out.append("  \(name.padded(toLength: 4)) \(percent(c.rigs[name] ?? .nan, digits: 2))") }
            if let l = c.link { out.append("  the lossy link (the bench's Python proxy, not rig) \(percent(l, digits: 2))") }
        }
        if let l = linkStats {
            out.append("")
            out.append(
                "link: \(l.chunks) chunks over \(l.connections) connections, \(l.held) held one RTO (\(percent(Double(l.held) / Double(max(l.chunks, 1)), digits: 2))); delay p50 \(fixed(l.delayMsP50, 1)) ms, p99 \(fixed(l.delayMsP99, 1)) ms, max \(fixed(l.delayMsMax, 1)) ms"
            )
        }
        return out
    }

    var json: String {
        func n(_ value: Double?) -> String { value.map(number) ?? "null" }
        func spreadJSON(_ values: [Double]) -> String {
            let (p50, p99, max) = Self.spread(values)
            return "{\"p50\": \(n(p50)), \"p99\": \(n(p99)), \"max\": \(n(max)), \"count\": \(values.count)}"
        }
        var fields = [
            "\"rigs\": \(rigs)", "\"link\": \"\(link)\"", "\"lead_time_s\": \(n(leadSeconds))", "\"realtime\": \(realtime)",
            "\"machine\": {\"cpus\": \(cpus), \"loadavg_1min_before\": \(n(loadBefore)), \"loadavg_1min_after\": \(n(loadAfter))}",
        ]
        if let s = skew {
            let lateness = rigNames.map { "\"\($0)\": \(spreadJSON(s.latenessMs[$0] ?? []))" }.joined(separator: ", ")
            fields.append(
                "\"skew\": {\"steps\": \(s.steps), \"interval_s\": \(n(s.intervalSeconds)), \"skew_ms\": \(spreadJSON(s.skewsMs)), \"steps_not_together\": \(s.splitSteps), "
                    + "\"edge_after_order_ms\": {\(lateness)}, \"integrity\": \(s.integrity.json)}")
        }
        if let k = kill {
            let kills = k.kills.map {
                "{\"when\": \"\($0.when)\", \"will_ms\": \(n($0.willMs)), \"last_trigger_after_kill_ms\": \(n($0.lastTriggerMs)), \"orders_while_missing\": \($0.ordersWhileMissing), "
                    + "\"said_paused_ms\": \(n($0.saidPausedMs)), \"return_s\": \(n($0.returnSeconds)), \"resumed_ms\": \(n($0.resumedMs)), "
                    + "\"next_order_ms\": \(n($0.nextOrderMs)), \"next_trigger_ms\": \(n($0.nextTriggerMs))}"
            }.joined(separator: ", ")
            fields.append("\"kill\": {\"steps\": \(k.steps), \"kills\": [\(kills)], \"integrity\": \(k.integrity.json)}")
        }
        if let b = broker {
            fields.append(
                "\"broker\": {\"steps\": \(b.steps), \"step\": \(b.step), \"down_ms\": \(n(b.downMs)), \"next_order_s\": \(n(b.nextOrderSeconds)), \"integrity\": \(b.integrity.json)}"
            )
        }
        if let c = cpu {
            // Percent of one core.
            let rigShares = rigNames.map { "\"\($0)\": \(n(c.rigs[$0].map { $0 * 100 }))" }.joined(separator: ", ")
            fields.append(
                "\"cpu\": {\"steps\": \(c.steps), \"lead_time_s\": \(n(c.leadSeconds)), \"steps_per_s\": \(n(c.stepsPerSecond)), \"seconds\": \(n(c.seconds)), "
                    + "\"broker_core_percent\": \(n(c.broker * 100)), \"broker_core_percent_per_rig\": \(n(c.broker * 100 / Double(rigs))), "
                    + "\"rig_core_percent\": {\(rigShares)}, \"link_core_percent\": \(n(c.link.map { $0 * 100 }))}"
            )
        }
        if let l = linkStats {
            fields.append(
                "\"link_stats\": {\"chunks\": \(l.chunks), \"held\": \(l.held), \"connections\": \(l.connections), \"delay_ms_p50\": \(n(l.delayMsP50)), \"delay_ms_p99\": \(n(l.delayMsP99)), \"delay_ms_max\": \(n(l.delayMsMax))}"
            )
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }
}

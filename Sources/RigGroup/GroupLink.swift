import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigRuntime
import Synchronization

/// How a rig takes part in a group.
public enum GroupRole: Sendable, Equatable {
    /// Plays its program and leads: orders each step at an absolute time once every rig is
    /// armed at it. `followers`: the rigs it waits for.
    case leader(followers: [String])
    /// Follows the group's leader (`leader`: its name, or nil to take the first leader seen).
    case follower(leader: String?)
}

/// The group's settings, from the command line and the rig file.
public struct GroupSettings: Sendable {
    public var group: String
    /// This rig's name in the group (topics, the leader's log).
    public var name: String
    public var role: GroupRole
    public var broker: BrokerAddress
    public var credentials: BrokerCredentials
    /// How far ahead the leader schedules a step (and its orders' message expiry).
    public var leadSeconds: Double = 1
    /// The leader refuses to start when a rig's clock may be off by more (default 1 ms).
    public var clockBoundNs: Int64 = 1_000_000
    /// The program's SHA-256 (the leader's orders carry it).
    public var sha: String = ""
    public var firstStep = 0
    /// The program's pace (the leader's): shot start to shot start, and a timelapse's
    /// ramped intervals (element i: step i's shot to step i+1's). Nil: as soon as every
    /// rig is armed, a lead time ahead.
    public var intervalSeconds: Double?
    public var stepIntervals: [Double]?

    /// The least time from step `step`'s shot to the next one's, when the program is paced.
    func interval(after step: Int) -> Double? {
        guard let intervalSeconds else { return nil }
        if let stepIntervals, stepIntervals.indices.contains(step) { return stepIntervals[step] }
        return intervalSeconds
    }

    public init(group: String, name: String, role: GroupRole, broker: BrokerAddress, credentials: BrokerCredentials) {
        self.group = group
        self.name = name
        self.role = role
        self.broker = broker
        self.credentials = credentials
    }
}

/// The group as the leader sees it, for a status page: every rig's state and next step.
public struct GroupSnapshot: Sendable, Equatable, Encodable {
    public struct RigView: Sendable, Equatable, Encodable {
        public var name: String
        /// `armed`, `moving`, `shooting`, `shot`, `ready`, `lost`, `done`, `stopped`, or
        /// `waiting` (not heard from since the link connected).
        public var state: String
        /// 1-based step it shoots next (past the last: done).
        public var next: Int
        /// A keyframes path: seconds it is behind the group's clock, when the path leaves
        /// it no room to catch up (an axis at its limit).
        public var behindSeconds: Double?
    }
    public var group: String
    public var leader: String
    /// `running`, `paused` (a rig is missing), `done`, `stopped`, `connecting`.
    public var state: String
    public var rigs: [RigView]
    public var missing: [String]
    /// Why the group cannot go on (a clock off by more than the bound), or why it stopped
    /// (a rig lost during a keyframes path, a STOP from another rig and its reason).
    public var problem: String?
}

/// A rig's link to its group over MQTT, as a session part: it moves the rig from step to
/// step through the session's door (`goTo`/`advance`, only while connected and at rest),
/// reports `armed` when the rig settled at a step, fires the step's shot at the leader's
/// time from a timer of its own and reports the measured edge; the leader decides each
/// step's time once every rig is armed at it, pauses while a rig is missing and logs every
/// rig's frames in its shot log. A `stop` from any rig stops every rig through the
/// session's one stop (brake, park, safe state).
///
/// A rig never moves or shoots on a message that is expired, out of order (an older
/// `seq` of the leader's run), from another group, or not from the group's leader.
/// MQTT's events arrive on libmosquitto's thread and are queued; the part acts on them on
/// the session's event thread (`poll`), its timers' on their own threads.
public final class GroupLink: SessionPart, @unchecked Sendable {
    enum Input: Sendable {
        case mqtt(MQTTClient.Event)
        /// The step's frame was taken (its edge), or the camera failed (nil: the shot
        /// runner stops the run).
        case fired(step: Int, edgeNs: Int64?)
    }

    struct Peer {
        var lost = true
        var state = "waiting"
        /// A state heard since our last (re)connect.
        var fresh = false
        var armed: Int?
        var next: Int
        var clock: ClockReport?
        /// Its keyframes path: where its timeline is, at rest or not; its brake's seconds.
        var path: RigState?
        var rampSeconds: Double?
    }

    struct Pending {
        var step: Int
        var rigs: Set<String>
        var atNs: Int64
        var reported: Set<String> = []
        /// Rigs whose will came while the order was out.
        var lost: Set<String> = []
    }

    public let settings: GroupSettings
    private let topics: GroupTopics
    private let logger: Logger
    private var runner: ShotRunner?
    private let axisNames: [String]
    private let steps: [Step]
    /// A keyframes program: one "step", its path's start, at one time on every rig.
    private let keyframes: Bool
    private let clockReport: ClockReport
    private let inbox = Mutex<[Input]>([])
    private let arrived = DispatchSemaphore(value: 0)
    private var client: MQTTClient?
    private var door: SessionDoor?

    // Event thread (or the leader's `prepare` before the session).
    private var connected = false
    private var stepCount: Int { keyframes ? 1 : steps.count }
    /// Where the rig is (0-based step; firstStep - 1 before its first move) and whether it
    /// is at rest there.
    private var at: Int
    private var atRest = true
    private var armed: Int?
    private var moveRequested: Int?
    private var endRequested = false
    private var pendingShot: Int?
    private var timer: ShotTimer?
    private var lastShot: ShotReport?
    private var stopping = false
    /// A STOP from another rig (or the leader's stopped state) stopped this one.
    private var groupStopped = false
    private var runStartNs = WallClock.nanoseconds()
    // Follower.
    private var leaderName: String?
    private var leaderRun: String?
    private var lastSeq = -1
    private var myNext: Int?
    private var warnedSteps = false
    // Leader.
    private let run = UUID().uuidString.prefix(8).lowercased()
    private var seq = 0
    private var peers: [String: Peer] = [:]
    private var ownNext: Int
    private var pending: Pending?
    /// The last step ordered and its time: the next is due an interval after it.
    private var lastOrder: (step: Int, atNs: Int64)?
    private var lastPublishedState: LeaderState?
    private var pauseNotice: String?
    /// What the path's hold waits for once no rig is missing (said once per change).
    private var holdNotice: String?
    private var pauseNoticeKey: String?
    private var holdSinceNs: Int64 = 0
    /// This rig's STOP went out already (its program stopped here).
    private var stopPublished = false
    /// The peers' clocks were checked against the bound (`prepare`, or before the first
    /// order when the leader did not wait in `prepare`: `rig serve`).
    private var clocksChecked = false
    private var problem: String?
    private let shared = Mutex<GroupSnapshot?>(nil)
    /// Why the group stopped this run, when a rig was lost during a keyframes path.
    private let lostDuringPath = Mutex<String?>(nil)
    /// The shot timer's priority was said (once, after the first shot).
    private var priorityNoted = false
    /// A keyframes path on the group's clock (nil: a rig lost during the path stops it).
    private var timeline: SharedTimeline?
    /// Seconds this rig's brake to a hold takes on its path (the leader takes the longest).
    private var rampSeconds = 0.5
    /// The leader: the path is paused (a rig is missing, or the group just came back),
    /// and the hold it ordered (path seconds), if any.
    private var pathPaused = false
    private var holdAt: Double?
    /// The path clock's latest segments (UTC), as the leader state carries them.
    private var pathSegments: [PathSegment]?
    /// This rig lost the broker while its path ran (it holds on the path until it is back).
    private var heldForBroker = false
    /// What this rig last said of its path (published again when it changes).
    private var lastPathState: (atRest: Bool, pathSeconds: Double, atLimit: Bool)?
    /// Said that the path cannot catch up with the group's clock (until it has).
    private var saidBehind = false
    /// The loop's tick (a frame of the path), for a rejoin's pose.
    private var tickSeconds = 0.01
    /// A follower restarted while the group's path was paused: it rejoins it (leads in
    /// to its path's pose at the group's hold, or at its last frame's moment before it).
    private var rejoining = false
    /// The frames on the move this rig's earlier run of the path shot (its shot log), if known.
    private var earlierFrames: Int?
    /// The group's leader was lost (its will): no path is rejoined on its stale state.
    private var leaderLost = false
    /// The leader: the rigs said to be back without their path (restarted), leading in to it.
    private var saidRejoining: Set<String> = []
    /// This follower (a stepped program) was told the group holds a path for it.
    private var saidNoPath = false

    /// Why the run did not finish, when a rig was lost during a keyframes path (every rig
    /// stopped it: `rig play` and `rig follow` exit 1 with it); nil otherwise.
    public var stoppedBecause: String? { lostDuringPath.withLock { $0 } }

    /// The group as this leader last saw it (nil on a follower, or before it connected).
    public var snapshot: GroupSnapshot? { shared.withLock { $0 } }

    /// - Parameter keyframes: a keyframes program (no steps): every rig holds at its
    ///   path's first pose after the lead-in, and the leader starts the path on every rig
    ///   at one time; the path then runs on each rig's own loop (CLOCK_MONOTONIC, which
    ///   chrony keeps at the true rate) to its end.
    public init(
        settings: GroupSettings, steps: [Step], axisNames: [String], runner: ShotRunner?, logger: Logger, clock: ClockReport, keyframes: Bool = false
    ) {
        self.settings = settings
        self.keyframes = keyframes
        self.topics = GroupTopics(group: settings.group)
        self.steps = steps
        self.axisNames = axisNames
        self.runner = runner
        self.logger = logger
        self.clockReport = clock
        at = settings.firstStep - 1
        ownNext = settings.firstStep
        if case .leader(let followers) = settings.role {
            for name in followers { peers[name] = Peer(next: settings.firstStep) }
        } else if case .follower(let leader) = settings.role {
            leaderName = leader
        }
    }

    /// The shot log's runner (the leader logs every rig's frames there). Before the run.
    public func attachRunner(_ runner: ShotRunner?) { self.runner = runner }

    /// A keyframes path on the group's clock (the loop's `LoopOptions.sharedTimeline`):
    /// a rig lost during the path pauses every rig on its path and the group resumes when
    /// it is back, instead of stopping. `axes`: this rig's, for its brake's length. Before
    /// the run, with the path armed (`rig serve` arms its one timeline for each path).
    public func attachTimeline(_ timeline: SharedTimeline, axes: [Axis], tickSeconds: Double = 0.01) {
        guard let peaks = timeline.peaks else { return }
        self.timeline = timeline
        self.tickSeconds = tickSeconds
        rampSeconds = SharedTimeline.rampSeconds(axes: axes, peaks: peaks)
    }

    /// A follower: the frames on the move (1…n) its earlier run of this path shot, read
    /// from its shot log, when this run may rejoin a path the group paused without it
    /// (restarted): it leads in to frame n's moment and shoots the rest on its way up to
    /// the group's hold, none twice and none skipped. Nil: not known (the frames between
    /// its loss and the hold are not shot; it says which). Before the run.
    public func attachEarlierFrames(_ frames: Int?) { earlierFrames = frames }

    /// Disconnects (cleanly: no will) when the run never started.
    public func close() { client?.close() }

    private var isLeader: Bool { if case .leader = settings.role { true } else { false } }

    // MARK: - Connecting

    /// Connects (the network thread retries until the broker answers). The will marks
    /// this rig `lost`.
    public func connect() throws(GroupSetupError) {
        guard client == nil else { return }
        let will = MQTTClient.Will(topic: topics.state(settings.name), payload: GroupJSON.encode(RigState(state: "lost")), retain: true)
        let client = try MQTTClient(
            clientID: "rig-\(settings.group)-\(settings.name)", address: settings.broker, credentials: settings.credentials, will: will
        ) { [weak self] event in
            guard let self else { return }
            self.inbox.withLock { $0.append(.mqtt(event)) }
            self.arrived.signal()
        }
        client.subscribe(topics.all)
        self.client = client
        try client.start()
    }

    /// The leader, before anything moves: waits (at most `seconds`) until the broker
    /// answers and every follower is there with its clock; refuses a clock above the
    /// bound, naming the rig. Returns what to tell a person about unknown clocks.
    public func prepare(within seconds: Double, say: (String) -> Void) throws(GroupSetupError) -> [String] {
        try connect()
        let deadline = Date().addingTimeInterval(seconds)
        var lastWaiting: [String] = []
        while true {
            drain()
            let waiting = peers.filter { !$0.value.fresh || $0.value.lost || $0.value.clock == nil }.map(\.key).sorted()
            if connected, waiting.isEmpty { break }
            if waiting != lastWaiting || lastWaiting.isEmpty && !connected {
                say(
                    connected
                        ? "group \(settings.group): waiting for \(waiting.joined(separator: ", "))"
                        : "group \(settings.group): waiting for the broker \(settings.broker)")
                lastWaiting = waiting
            }
            guard Date() < deadline else {
                throw GroupSetupError(
                    connected
                        ? "group \(settings.group): \(waiting.joined(separator: ", ")) did not report within \(Int(seconds)) s (is `rig follow` running there, with --group \(settings.group)?)"
                        : "group \(settings.group): the broker \(settings.broker) did not answer within \(Int(seconds)) s")
            }
            _ = arrived.wait(timeout: .now() + 0.2)
        }
        clocksChecked = true
        var notes: [String] = []
        var clocks = peers.map { ($0.key, $0.value.clock ?? ClockReport(source: "unknown")) }
        clocks.append((settings.name, clockReport))
        for (name, clock) in clocks.sorted(by: { $0.0 < $1.0 }) {
            if let worst = clock.worstNs, worst > settings.clockBoundNs {
                throw GroupSetupError(
                    "group \(settings.group): the clock of rig \(name) may be off by \(ClockReport.ms(worst)) (\(clock)), above the bound of \(ClockReport.ms(settings.clockBoundNs)); its shots would not be together. Let chrony settle (chronyc tracking), or raise --clock-bound"
                )
            }
            if clock.worstNs == nil {
                notes.append("clock of rig \(name): unknown (\(clock.note ?? "no chrony")): shots are together only as far as the clocks agree")
            }
        }
        return notes
    }

    // MARK: - SessionPart

    public var partName: String { "group" }

    public func start(_ door: SessionDoor) throws(PartStartFailure) {
        do { try connect() } catch { throw PartStartFailure(part: partName, cause: .unavailable, detail: error.description) }
        self.door = door
        runStartNs = WallClock.nanoseconds()
        if connected { announce() }
        decide()
    }

    public func handle(_ event: LoopEvent) {
        guard case .player(let e, _) = event else { return }
        switch e {
        case .moveStarted(let step):
            at = step
            atRest = false
            armed = nil
            moveRequested = nil
            publishOwnState("moving")
        case .ready(let step):
            armedAt(step)
        case .readyToStart:
            // A keyframes program at its first pose: armed for the path's start.
            armedAt(0)
        case .readyToRejoin(let tick):
            // At rest at its path's pose (a rejoin): on the path from rest, on the group's
            // clock (its hold: it comes up to it, then ramps in with the group).
            atRest = true
            timeline?.engage(restingAtTick: tick)
            door?.mailbox.post(.advance)
            logger.notice(
                "group \(settings.group): at the path's pose at \(fixed(Double(tick) * tickSeconds, 3)) s: on the path from rest, on the group's clock")
            publishOwnState("rejoining")
        case .programEnded(let stopped):
            if !stopped { endRequested = true }
            if keyframes, !stopped, pathUnderWay {
                // Rigs on one clock end their paths together: each says when.
                logger.info("group \(settings.group): the path ended at \(UTCTime.isoMicros(nanoseconds: WallClock.nanoseconds()))")
            }
            // Stopped on this rig, not by the group (a stall stopped its program, a bent
            // frame, a failed camera, STOP here): the group stops now, not when this rig
            // has parked, and never waits on a rig that will not come.
            if stopped, !groupStopped, !stopping, connected {
                client?.publish(topics.stop, GroupJSON.encode(StopOrder(from: settings.name)))
                stopPublished = true
            }
            stopping = true
            timer?.cancel()
            // A frame still exposing was cut short: the shot runner logs it as interrupted,
            // so its late end is not logged (or reported) as a frame too.
            pendingShot = nil
            publishOwnState(stopped ? "stopped" : "done")
        default:
            break
        }
    }

    private func armedAt(_ step: Int) {
        at = step
        atRest = true
        armed = step
        logger.info("group \(settings.group): armed at \(keyframes ? "the path's start" : "step \(step + 1)")")
        if !isLeader { client?.publish(topics.armed(settings.name), GroupJSON.encode(Armed(step: step))) }
        publishOwnState("armed")
    }

    public func poll() {
        drain()
        watchPath()
        decide()
    }

    public func finish(_ outcome: SessionOutcome) {
        let stoppedHere: Bool
        switch outcome {
        case .ran(let summary): stoppedHere = summary.end != .finished && !stopping || summary.stoppedBySignal
        case .refused: stoppedHere = true
        }
        end(stoppedHere: stoppedHere)
    }

    /// The program ended (`rig serve`: one link per program, the session goes on):
    /// `stoppedHere` — stopped on this rig, so the group stops too. Event thread.
    public func end(stoppedHere: Bool) {
        timer?.cancel()
        drain()
        if stoppedHere, !stopPublished {
            // STOP on any rig stops the group.
            client?.publish(topics.stop, GroupJSON.encode(StopOrder(from: settings.name)))
        }
        let ended = stoppedHere || groupStopped || endRequested == false ? "stopped" : "done"
        if isLeader { publishLeaderState(force: true, state: ended) }
        publishOwnState(ended)
        client?.close()
    }

    // MARK: - Inputs

    private func drain() {
        let inputs = inbox.withLock { queue -> [Input] in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for input in inputs {
            switch input {
            case .mqtt(.connected):
                connected = true
                for key in peers.keys { peers[key]?.fresh = false }
                logger.info("group \(settings.group): connected to \(settings.broker)")
                if isLeader, heldForBroker { leaderBack() }
                if door != nil || isLeader { announce() }
            case .mqtt(.disconnected(let reason)):
                if connected { logger.warning("group \(settings.group): lost the broker (\(reason)); every rig holds still until it is back") }
                connected = false
                if timeline != nil {
                    // Its path holds where it can brake to (the group's clock is not known
                    // while away); the lag counts on and is made up once it is back.
                    holdForBroker()
                } else {
                    // A path that runs cannot hold still: it stops (the others stop on this rig's will).
                    stopPath("rig \(settings.name) lost the broker (\(reason))")
                }
            case .mqtt(.message(let message)):
                receive(message)
            case .fired(let step, let edge):
                fired(step: step, edgeNs: edge)
            }
        }
    }

    /// This rig's retained state, its clock (and the leader's state), after every connect.
    private func announce() {
        client?.publish(topics.clock(settings.name), GroupJSON.encode(clockReport), retain: true)
        publishOwnState(armed != nil ? "armed" : (atRest ? "ready" : "moving"))
        if isLeader { publishLeaderState(force: true) }
    }

    private var ownState = "ready"

    private func publishOwnState(_ state: String) {
        ownState = state
        var s = RigState(state: state, armed: armed, lastShot: lastShot)
        if let timeline {
            s.rampSeconds = rampSeconds
            let report = timeline.report
            if report.engaged, !stopping {
                s.pathSeconds = report.pathSeconds
                s.atRest = report.atRest
                s.behindSeconds = report.lagSeconds
                s.atLimit = report.atLimit
                lastPathState = (report.atRest, report.pathSeconds, report.atLimit)
            }
        }
        client?.publish(topics.state(settings.name), GroupJSON.encode(s), retain: true)
    }

    private func receive(_ message: MQTTClient.Message) {
        guard let kind = topics.classify(message.topic) else { return }
        switch kind {
        case .stop:
            guard let order = GroupJSON.decode(StopOrder.self, message.payload), !message.retained else { return }
            if order.from != settings.name, !stopping {
                if let reason = order.reason {
                    lostDuringPath.withLock { $0 = "group \(settings.group): stopped by \(order.from): \(reason) during the path" }
                }
                logger.notice("group \(settings.group): STOP from \(order.from)\(order.reason.map { " (\($0))" } ?? ""): braking and parking")
                // The page's group card says who stopped it, and why when it was said.
                problem = "stopped by \(order.from)\(order.reason.map { ": \($0)" } ?? "")"
                stopping = true
                groupStopped = true
                timer?.cancel()
                door?.stop()
            }
        case .step:
            guard !isLeader, let order = GroupJSON.decode(StepOrder.self, message.payload) else { return }
            followOrder(order, expiry: message.expirySeconds)
        case .leaderState:
            guard !isLeader, let state = GroupJSON.decode(LeaderState.self, message.payload) else { return }
            followState(state)
        case .rigState(let rig):
            if !isLeader, rig == leaderName { leaderLost = GroupJSON.decode(RigState.self, message.payload)?.state == "lost" }
            if !isLeader, rig == leaderName, GroupJSON.decode(RigState.self, message.payload)?.state == "lost" {
                // The leader is gone during a path: no one can stop the group for it. On the
                // group's clock the path holds until the leader is back.
                if timeline != nil, pathUnderWay {
                    logger.warning("group \(settings.group): the leader \(rig) is lost (its will message): holding on the path until it is back")
                    holdForBroker()
                } else {
                    stopPath("the leader \(rig) lost (its will message)")
                }
            }
            guard isLeader, peers[rig] != nil, let state = GroupJSON.decode(RigState.self, message.payload) else { return }
            peerState(rig, state)
        case .armed(let rig):
            guard isLeader, peers[rig] != nil, let armed = GroupJSON.decode(Armed.self, message.payload) else { return }
            peers[rig]?.armed = armed.step
        case .shot(let rig):
            guard isLeader, peers[rig] != nil, let shot = GroupJSON.decode(ShotReport.self, message.payload) else { return }
            peerShot(rig, shot)
        case .clock(let rig):
            guard isLeader, peers[rig] != nil, let clock = GroupJSON.decode(ClockReport.self, message.payload) else { return }
            peers[rig]?.clock = clock
        }
    }

    // MARK: - Follower

    /// From the group's leader (the named one, or the first seen), in order: where to go.
    private func followState(_ state: LeaderState) {
        if let leaderName, state.leader != leaderName {
            logger.warning("group \(settings.group): ignored a leader state from \"\(state.leader)\" (the group's leader is \"\(leaderName)\")")
            return
        }
        leaderName = state.leader
        if state.run != leaderRun {
            // A leader that (re)started: its own count begins anew.
            leaderRun = state.run
            lastSeq = -1
        }
        guard state.seq > lastSeq else {
            // The same state again (a reconnect): back with the group as it was.
            if state.seq == lastSeq { releaseHold(state) }
            return
        }
        lastSeq = state.seq
        if state.steps != stepCount, !warnedSteps {
            warnedSteps = true
            logger.error("group \(settings.group): the leader's program has \(state.steps) steps, this rig's \(stepCount): following its steps by number")
        }
        myNext = state.next[settings.name]
        if let timeline, keyframes, !stopping {
            if let path = state.path, path != pathSegments {
                follow(path, on: timeline)
                logger.info("group \(settings.group): the group's path clock: \(Self.describe(path))")
            }
        }
        releaseHold(state)
        rejoinIfNeeded(state)
        if state.state == "stopped", !stopping {
            logger.notice("group \(settings.group): the leader stopped: braking and parking")
            stopping = true
            groupStopped = true
            door?.stop()
        }
    }

    /// A follower started again (the same command) while the group's path is paused
    /// without it: the leader's state says the path is under way (its clock's segments),
    /// this rig started it before (`next`), and every rig holds at one path time. It leads
    /// in to its own path's pose there (or, knowing the frames it shot, at its last
    /// frame's moment: it shoots the rest on its way up), within its limits; once at rest
    /// on its path the group ramps in together. Once, before this run's path started.
    private func rejoinIfNeeded(_ state: LeaderState) {
        if !isLeader, !keyframes, !saidNoPath, state.state == "paused", state.path?.last?.kind == "hold" {
            // The group holds on its paths for this rig, which plays steps: it cannot join.
            saidNoPath = true
            logger.error(
                "group \(settings.group): the group holds its keyframes paths for this rig, but this rig's program has steps: it cannot rejoin the path (start it again with its keyframes program, or STOP the group)"
            )
        }
        guard !isLeader, keyframes, let timeline, let door, !rejoining, !stopping, !leaderLost, pendingShot == nil, lastShot == nil, !timeline.engaged
        else { return }
        guard state.state == "paused", (state.next[settings.name] ?? 0) >= 1, let hold = state.path?.last, hold.kind == "hold" else { return }
        rejoining = true
        armed = nil
        let x = hold.pathSeconds
        // The frame at the group's path time x is a tick ahead of it (a timeline counts a
        // tick behind its latest frame).
        door.mailbox.post(.rejoin(pathSeconds: x + tickSeconds, framesShot: earlierFrames))
        let frames =
            earlierFrames.map { "its last frame on the move was \($0): it leads in to that frame's moment and shoots the next ones on its way up" }
            ?? "the frames on the move it missed while it was away are not shot (no shot log of its earlier run)"
        logger.notice(
            "group \(settings.group): rejoining the path the group holds at \(fixed(x, 3)) s: leading in to this rig's pose there within its limits (\(frames))"
        )
        publishOwnState("rejoining")
    }

    /// An order to shoot: only from the group's leader, in order, not expired, for this
    /// rig at the step it is armed at.
    private func followOrder(_ order: StepOrder, expiry: UInt32?) {
        let now = WallClock.nanoseconds()
        let refusal: String?
        if order.leader != leaderName || order.run != leaderRun {
            refusal = "not from the group's leader"
        } else if order.seq <= lastSeq {
            refusal = "out of order (seq \(order.seq) after \(lastSeq))"
        } else if order.atNs <= now || expiry == 0 {
            refusal = "expired (its time passed \(ClockReport.ms(now - order.atNs)) ago)"
        } else {
            refusal = nil
        }
        if let refusal {
            logger.warning("group \(settings.group): ignored the order for step \(order.step + 1): \(refusal)")
            return
        }
        lastSeq = order.seq
        guard order.rigs.contains(settings.name) else { return }
        if lastShot?.step == order.step, let lastShot {
            // Shot already (its report was lost): say it again, never shoot twice.
            client?.publish(topics.shot(settings.name), GroupJSON.encode(lastShot))
            return
        }
        guard armed == order.step, atRest, pendingShot == nil, !stopping else {
            logger.warning("group \(settings.group): ignored the order for step \(order.step + 1): this rig is not armed there")
            return
        }
        schedule(step: order.step, atNs: order.atNs)
    }

    // MARK: - Both

    /// The step's frame at `atNs`: the rig's camera fired through the shot runner (it
    /// holds still until the exposure is over), or, without a camera, the group's timer.
    private func schedule(step: Int, atNs: Int64) {
        pendingShot = step
        publishOwnState("shooting")
        let report: @Sendable (Int64?) -> Void = { [weak self] edge in
            guard let self else { return }
            self.inbox.withLock { $0.append(.fired(step: step, edgeNs: edge)) }
            self.arrived.signal()
        }
        if keyframes {
            // The path starts on the loop's first tick after the group's time, on the
            // group's clock from that time.
            let mailbox = door?.mailbox
            let timeline = timeline
            let run = SharedTimeline.Segment(.run, atNs: Self.loopNs(atNs), pathSeconds: 0)
            if isLeader { pathSegments = [PathSegment(kind: "run", atNs: atNs, pathSeconds: 0, rampSeconds: 0)] }
            timer = ShotTimer(atNs: atNs) { edge in
                timeline?.engage(run)
                mailbox?.post(.advance)
                report(edge)
            }
            return
        }
        if runner?.fireInGroup(step: step, atNs: atNs, runSeconds: seconds(atNs), fired: report) == true { return }
        timer = ShotTimer(atNs: atNs, action: report)
    }

    private func fired(step: Int, edgeNs: Int64?) {
        guard pendingShot == step else { return }
        pendingShot = nil
        timer = nil
        guard let edgeNs else {
            // The camera failed: the shot runner stops the run (and the group with it).
            logger.error("group \(settings.group): step \(step + 1) was not shot (the camera failed)")
            return
        }
        var pose: [String: Double] = [:]
        if steps.indices.contains(step) { for (i, name) in axisNames.enumerated() where i < steps[step].pose.count { pose[name] = steps[step].pose[i] } }
        let report = ShotReport(step: step, edgeNs: edgeNs, label: steps.indices.contains(step) ? steps[step].label : nil, pose: pose)
        lastShot = report
        if !priorityNoted, let note = RealtimeSetup.shotThreadNote {
            priorityNoted = true
            if RealtimeSetup.shotThreadGrant?.fifo == true {
                logger.info("group \(settings.group): \(note)")
            } else {
                logger.warning("group \(settings.group): \(note)")
            }
        }
        logger.info(
            "group \(settings.group): \(keyframes ? "the path started" : "step \(step + 1) shot") at \(UTCTime.isoMicros(nanoseconds: edgeNs))")
        // Every rig logs its own frames (a follower in its own log); the leader every rig's.
        if !keyframes {
            runner?.logFrame(step: step, rig: nil, label: nil, axisNames: axisNames, pose: [], seconds: seconds(edgeNs), edgeNs: edgeNs)
        }
        if isLeader {
            pending?.reported.insert(settings.name)
            ownNext = max(ownNext, step + 1)
            publishLeaderState()
        } else {
            client?.publish(topics.shot(settings.name), GroupJSON.encode(report))
        }
        publishOwnState("shot")
    }

    /// A keyframes path has started on this rig (or its start was ordered) and not ended.
    private var pathUnderWay: Bool {
        keyframes && !stopping && (isLeader ? lastOrder != nil : pendingShot != nil || lastShot != nil || rejoining)
    }

    /// A rig was lost while a keyframes path ran without the group's clock (`rig serve`), or
    /// this rig lost the broker then: every rig stops it through its session's one stop (brake within its limits, park):
    /// this one, the others by a STOP naming why (and, from the leader, its state
    /// `stopped` with who is missing). The run ends stopped because of it (exit 1).
    private func stopPath(_ why: String) {
        guard pathUnderWay else { return }
        lostDuringPath.withLock { $0 = "group \(settings.group): stopped: \(why) during the path" }
        logger.error(
            "group \(settings.group): stopped: \(why) during the path; every rig brakes within its limits and parks (a keyframes path cannot pause and resume yet)"
        )
        problem = "stopped: \(why) during the path"
        stopping = true
        groupStopped = true
        timer?.cancel()
        // Not queued while away: a STOP sent on a later reconnect could stop another run.
        if connected { client?.publish(topics.stop, GroupJSON.encode(StopOrder(from: settings.name, reason: why))) }
        if isLeader { publishLeaderState(force: true, state: "stopped") }
        door?.stop()
    }

    // MARK: - A keyframes path on the group's clock

    /// The loop clock's (CLOCK_MONOTONIC) time for the UTC time `utcNs`.
    static func loopNs(_ utcNs: Int64) -> UInt64 {
        let now = Int64(MonotonicClock().now())
        return UInt64(max(0, now + (utcNs - WallClock.nanoseconds())))
    }

    static func segment(_ p: PathSegment) -> SharedTimeline.Segment {
        SharedTimeline.Segment(
            SharedTimeline.Segment.Kind(rawValue: p.kind) ?? .hold, atNs: loopNs(p.atNs), pathSeconds: p.pathSeconds, rampSeconds: p.rampSeconds)
    }

    static func describe(_ path: [PathSegment]) -> String {
        path.map { "\($0.kind) at \(UTCTime.isoMicros(nanoseconds: $0.atNs)) from \(fixed($0.pathSeconds, 3)) s" }.joined(separator: ", ")
    }

    /// This rig lost the broker (or the leader was lost) while its path ran: it brakes to
    /// rest on its path and holds there until it hears the group again.
    /// The group's path clock from now on (`path`, the leader's order or this rig's own
    /// hold), on this rig's timeline.
    private func follow(_ path: [PathSegment], on timeline: SharedTimeline) {
        pathSegments = path
        timeline.follow(path.map(Self.segment))
    }

    /// The longest brake any rig of the group needs (each says its own).
    private var groupRampSeconds: Double { peers.values.compactMap(\.rampSeconds).reduce(rampSeconds, max) }

    private func holdForBroker() {
        guard let timeline, pathUnderWay, !heldForBroker else { return }
        heldForBroker = true
        timeline.holdHere(true)
        logger.warning("group \(settings.group): holding on the path (braking within the limits) until the group is back")
    }

    /// A follower heard the leader again: it follows the group's clock (the lag it held
    /// is made up, or the group's hold brings it to where the others wait).
    private func releaseHold(_ state: LeaderState) {
        guard heldForBroker, !isLeader, let timeline, state.state != "stopped", !stopping else { return }
        heldForBroker = false
        timeline.holdHere(false)
        logger.notice("group \(settings.group): the group is back: the path follows its clock again")
    }

    /// The leader is back on the broker after holding its path: the group holds where
    /// this rig is, until every rig is back and there.
    private func leaderBack() {
        guard let timeline, pathUnderWay else { return }
        heldForBroker = false
        let now = WallClock.nanoseconds()
        let x = timeline.report.pathSeconds
        pathPaused = true
        holdAt = x
        holdSinceNs = now
        follow([PathSegment(kind: "hold", atNs: now, pathSeconds: x, rampSeconds: 0)], on: timeline)
        timeline.holdHere(false)
        logger.warning("group \(settings.group): back on the broker: the path holds at \(fixed(x, 3)) s until every rig is back")
    }

    /// The leader: a rig was lost while the path ran: every rig brakes its timeline to a
    /// hold on its path, along one smooth step of the group's clock (the longest any rig needs).
    private func pausePath() {
        guard isLeader, let timeline, pathUnderWay, !pathPaused else { return }
        pathPaused = true
        holdAt = nil
        let atNs = WallClock.nanoseconds() + 50_000_000
        let ramp = groupRampSeconds
        let x = timeline.referencePath(atNs: Self.loopNs(atNs)) ?? timeline.report.pathSeconds
        let brake = PathSegment(kind: "brake", atNs: atNs, pathSeconds: x, rampSeconds: ramp)
        follow([brake], on: timeline)
        logger.warning("group \(settings.group): pausing the path: every rig brakes to a hold at \(fixed(x + ramp / 2, 3)) s of its path")
        publishLeaderState(force: true)
    }

    /// The leader, while the path is paused: waits for every rig, then for every rig at
    /// rest at one path time (the furthest any came to; the others come up to it along
    /// their paths), then orders the ramp-in at one time a lead time ahead.
    private func decidePath() {
        guard let timeline else { return }
        let missing = peers.filter { $0.value.lost || !$0.value.fresh }.map(\.key).sorted()
        let reference = timeline.referencePath(atNs: MonotonicClock().now()) ?? 0
        if !missing.isEmpty {
            // Said again when who is missing changes, or the hold's place (not while the
            // rigs brake towards it).
            let key = "\(missing) \(holdAt.map { fixed($0, 2) } ?? "braking")"
            if pauseNoticeKey != key {
                pauseNoticeKey = key
                // Where the rigs hold: the hold, or where the brake ends.
                let brake = pathSegments?.last.flatMap { $0.kind == "brake" ? $0.pathSeconds + $0.rampSeconds / 2 : nil }
                let notice = "paused on the path at \(fixed(holdAt ?? brake ?? reference, 2)) s: waiting for \(missing.joined(separator: ", ")) (lost)"
                pauseNotice = notice
                logger.warning("group \(settings.group): \(notice)")
            }
            publishLeaderState()
            return
        }
        // A rig back without its path (restarted) rejoins it: it leads in to its pose at
        // the group's hold (published below) and says when it is at rest there.
        for rig in peers.filter({ $0.value.path == nil && $0.value.state != "done" }).map(\.key).sorted() where !saidRejoining.contains(rig) {
            saidRejoining.insert(rig)
            logger.notice(
                "group \(settings.group): rig \(rig) came back without its path (restarted): it rejoins it, leading in to its pose at the group's hold")
        }
        let now = WallClock.nanoseconds()
        if let brake = pathSegments?.last, brake.kind == "brake", now < brake.atNs + Int64(brake.rampSeconds * 1e9) { return }
        let own = timeline.report
        let furthest = peers.values.compactMap { $0.path?.pathSeconds }.reduce(max(own.pathSeconds, reference), max)
        if holdAt.map({ furthest > $0 + 1e-4 }) ?? true {
            // Hold where the furthest rig is (a rig that held itself is behind: it comes up).
            holdAt = furthest
            holdSinceNs = now
            follow([PathSegment(kind: "hold", atNs: now, pathSeconds: furthest, rampSeconds: 0)], on: timeline)
            logger.info("group \(settings.group): every rig holds at \(fixed(furthest, 3)) s of its path")
            publishLeaderState(force: true)
            return
        }
        guard let x = holdAt else { return }
        let there = { (rest: Bool?, path: Double?) in rest == true && abs((path ?? -1) - x) < 0.02 }
        let coming = peers.filter { $0.value.state != "done" && !there($0.value.path?.atRest, $0.value.path?.pathSeconds) }
            .map { "\($0.key) (\($0.value.state))" }.sorted()
        guard there(own.atRest, own.pathSeconds), coming.isEmpty else {
            // Who the hold waits for, once the rigs have had 5 s to get there (a rejoin
            // that never arrives holds the group at rest: it says so, once per change;
            // STOP ends it).
            guard now - holdSinceNs > 5_000_000_000 else { return }
            let waiting = (there(own.atRest, own.pathSeconds) ? [] : ["\(settings.name) (this rig)"]) + coming
            let notice = "paused on the path at \(fixed(x, 2)) s: waiting for \(waiting.joined(separator: ", ")) to come to rest there"
            if holdNotice != notice {
                holdNotice = notice
                logger.notice("group \(settings.group): \(notice)")
            }
            return
        }
        holdNotice = nil
        let ramp = groupRampSeconds
        let at = now + Int64(settings.leadSeconds * 1e9)
        follow(
            [
                PathSegment(kind: "hold", atNs: now, pathSeconds: x, rampSeconds: 0), PathSegment(kind: "rampIn", atNs: at, pathSeconds: x, rampSeconds: ramp),
            ], on: timeline)
        pathPaused = false
        holdAt = nil
        logger.notice(
            "group \(settings.group): resumed\(pauseNotice.map { " (was \($0))" } ?? ""): every rig's path goes on from \(fixed(x, 3)) s at \(UTCTime.isoMicros(nanoseconds: at))"
        )
        pauseNotice = nil
        pauseNoticeKey = nil
        publishLeaderState(force: true)
    }

    /// Every poll: says where this rig's path is when that changes (at rest or not, a
    /// hold's place), and when it cannot catch up with the group's clock.
    private func watchPath() {
        guard let timeline, keyframes, !stopping else { return }
        let r = timeline.report
        guard r.engaged else { return }
        if r.atLimit, r.lagSeconds > 0.05, !saidBehind {
            saidBehind = true
            logger.warning(
                "group \(settings.group): the path is \(fixed(r.lagSeconds, 3)) s behind the group's clock and cannot catch up here (an axis at its limit); it goes on behind until the path leaves room"
            )
        } else if saidBehind, abs(r.lagSeconds) < 0.01 {
            saidBehind = false
            logger.notice("group \(settings.group): the path is back on the group's clock")
        }
        if r.atRest, lastPathState?.atRest != true {
            logger.info("group \(settings.group): at rest on the path at \(fixed(r.pathSeconds, 3)) s")
        }
        guard connected else {
            lastPathState = (r.atRest, r.pathSeconds, r.atLimit)
            return
        }
        let changed =
            lastPathState.map {
                $0.atRest != r.atRest || $0.atLimit != r.atLimit || abs($0.pathSeconds - r.pathSeconds) > (r.atRest ? 1e-4 : 0.5)
            } ?? true
        if changed { publishOwnState(ownState) }
    }

    private func seconds(_ edgeNs: Int64) -> Double { (Double(edgeNs - runStartNs) / 1e3).rounded() / 1e6 }

    /// Moves this rig to where its group wants it: only while connected, at rest and with
    /// no shot pending; once per move.
    private func moveIfNeeded() {
        // A keyframes path moves by itself once started, and ends by itself.
        guard !keyframes else { return }
        guard let door, connected, !stopping, atRest, pendingShot == nil else { return }
        guard let target = isLeader ? ownNext : myNext else { return }
        if target >= stepCount {
            // Done: the program ends once this rig is at its last step (the leader when every rig is done).
            let everyoneDone = !isLeader || peers.values.allSatisfy { $0.next >= stepCount }
            if everyoneDone, !endRequested, at == stepCount - 1 {
                endRequested = true
                door.mailbox.post(.advance)
            }
            return
        }
        guard armed != target, moveRequested != target else { return }
        moveRequested = target
        if target == at + 1 { door.mailbox.post(.advance) } else { door.mailbox.post(.goTo(step: target)) }
    }

    // MARK: - Leader

    private func peerState(_ rig: String, _ state: RigState) {
        peers[rig]?.state = state.state
        if state.state == "lost" {
            if peers[rig]?.lost == false { logger.warning("group \(settings.group): rig \(rig) is lost (its will message)") }
            peers[rig]?.lost = true
            // The order in flight waits no longer for its report: if it shot, the report
            // comes when it is back; if not, the step is ordered to it again then. (Marked
            // now: it may be back before the next decision.)
            pending?.lost.insert(rig)
            peers[rig]?.armed = nil
            peers[rig]?.fresh = false
            // A keyframes path that runs: every rig holds on its path (on the group's clock),
            // or, without one, stops it.
            if timeline != nil { pausePath() } else { stopPath("rig \(rig) lost (its will message)") }
            return
        }
        if peers[rig]?.lost == true, peers[rig]?.fresh == false, door != nil { logger.notice("group \(settings.group): rig \(rig) is back") }
        peers[rig]?.lost = false
        peers[rig]?.fresh = true
        peers[rig]?.armed = state.armed
        peers[rig]?.path = state.pathSeconds != nil ? state : nil
        // On its path again: a later restart is said again.
        if state.pathSeconds != nil { saidRejoining.remove(rig) }
        if let ramp = state.rampSeconds { peers[rig]?.rampSeconds = ramp }
        if let shot = state.lastShot { peerShot(rig, shot) }
    }

    private func peerShot(_ rig: String, _ shot: ShotReport) {
        guard let peer = peers[rig], peer.next == shot.step else { return }
        peers[rig]?.next = shot.step + 1
        pending?.reported.insert(rig)
        let names = shot.pose.map { $0.keys.sorted() } ?? []
        if !keyframes {
            runner?.logFrame(
                step: shot.step, rig: rig, label: shot.label, axisNames: names, pose: names.map { shot.pose?[$0] ?? 0 },
                seconds: seconds(shot.edgeNs), edgeNs: shot.edgeNs)
        } else {
            logger.info("group \(settings.group): rig \(rig) started its path at \(UTCTime.isoMicros(nanoseconds: shot.edgeNs))")
        }
        publishLeaderState()
    }

    private func publishLeaderState(force: Bool = false, state: String? = nil) {
        guard isLeader else { return }
        var next = peers.mapValues(\.next)
        next[settings.name] = ownNext
        let missing = peers.filter { $0.value.lost || !$0.value.fresh }.map(\.key).sorted()
        let all = next.values.min() ?? stepCount
        let current = state ?? (pathPaused ? "paused" : all >= stepCount ? "done" : missing.isEmpty ? "running" : "paused")
        var s = LeaderState(
            leader: settings.name, run: String(run), seq: seq, state: current, steps: stepCount, next: next, missing: missing, sha: settings.sha,
            path: pathSegments?.count == 1 && pathSegments?.first?.kind == "run" ? nil : pathSegments)
        let own = timeline?.report
        let views =
            [GroupSnapshot.RigView(name: settings.name, state: ownState, next: ownNext + 1, behindSeconds: own?.atLimit == true ? own?.lagSeconds : nil)]
            + peers.keys.sorted().map {
                GroupSnapshot.RigView(
                    name: $0, state: peers[$0]?.fresh == true || peers[$0]?.lost == true ? peers[$0]?.state ?? "waiting" : "waiting",
                    next: (peers[$0]?.next ?? 0) + 1, behindSeconds: peers[$0]?.path?.atLimit == true ? peers[$0]?.path?.behindSeconds : nil)
            }
        shared.withLock {
            $0 = GroupSnapshot(
                group: settings.group, leader: settings.name, state: connected ? current : "connecting", rigs: views, missing: missing, problem: problem)
        }
        if !force, let last = lastPublishedState, last.state == s.state, last.next == s.next, last.missing == s.missing, last.path == s.path { return }
        seq += 1
        s.seq = seq
        lastPublishedState = s
        client?.publish(topics.leaderState, GroupJSON.encode(s), retain: true)
    }

    /// The leader's turn: orders the lowest step any rig still has to shoot, to the rigs
    /// that have it next, once each is armed there and no rig is missing.
    private func decide() {
        moveIfNeeded()
        guard isLeader, door != nil, connected, !stopping else { return }
        if pathPaused {
            decidePath()
            return
        }
        let now = WallClock.nanoseconds()
        if let p = pending {
            // Every rig reported, or was lost while the order was out (its will came), or the
            // grace for a late report is over.
            let graceNs = Int64(max(2, settings.leadSeconds * 2) * 1e9)
            let accounted = p.rigs.isSubset(of: p.reported.union(p.lost))
            guard accounted || now > p.atNs + graceNs else { return }
            pending = nil
        }
        publishLeaderState()
        var next = peers.mapValues(\.next)
        next[settings.name] = ownNext
        guard let m = next.values.min(), m < stepCount else { return }
        let missing = peers.filter { $0.value.lost || !$0.value.fresh }.map(\.key).sorted()
        if !missing.isEmpty {
            let notice = "paused at step \(m + 1): waiting for \(missing.joined(separator: ", ")) (lost)"
            if pauseNotice != notice {
                pauseNotice = notice
                logger.warning("group \(settings.group): \(notice)")
            }
            return
        }
        if let notice = pauseNotice {
            pauseNotice = nil
            pauseNoticeKey = nil
            logger.notice("group \(settings.group): resumed (was \(notice))")
        }
        if !clocksChecked {
            // The leader did not wait for its followers before the run (`rig serve`): their
            // clocks are checked once all are there, before the first order.
            clocksChecked = true
            let clocks = peers.map { ($0.key, $0.value.clock ?? ClockReport(source: "unknown")) } + [(settings.name, clockReport)]
            if let (name, clock) = clocks.sorted(by: { $0.0 < $1.0 }).first(where: { ($0.1.worstNs ?? 0) > settings.clockBoundNs }) {
                problem =
                    "the clock of rig \(name) may be off by \(ClockReport.ms(clock.worstNs ?? 0)) (\(clock)), above the bound of \(ClockReport.ms(settings.clockBoundNs)); nothing was shot"
                logger.error("group \(settings.group): \(problem ?? "")")
                publishLeaderState(force: true)
                stopping = true
                door?.stop()
                return
            }
        }
        let rigs = Set(next.filter { $0.value == m }.map(\.key))
        let ready = rigs.allSatisfy { rig in
            rig == settings.name ? (armed == m && atRest && pendingShot == nil) : peers[rig]?.armed == m
        }
        guard ready else { return }
        // A lead time ahead, and an interval after the last step's shot when the program is paced.
        var atNs = now + Int64(settings.leadSeconds * 1e9)
        if let last = lastOrder, last.step == m - 1, let interval = settings.interval(after: last.step) {
            atNs = max(atNs, last.atNs + Int64(interval * 1e9))
        }
        // Ordered no earlier than a lead time before it is due (its expiry is the lead time).
        guard atNs - now <= Int64(settings.leadSeconds * 1e9) + 5_000_000 else { return }
        seq += 1
        let order = StepOrder(leader: settings.name, run: String(run), seq: seq, step: m, atNs: atNs, sha: settings.sha, rigs: rigs.sorted())
        let expiry = UInt32(max(1, settings.leadSeconds.rounded(.up)))
        guard client?.publish(topics.step, GroupJSON.encode(order), expirySeconds: expiry) == true else { return }
        pending = Pending(step: m, rigs: rigs, atNs: atNs)
        lastOrder = (m, atNs)
        logger.info("group \(settings.group): step \(m + 1) at \(UTCTime.isoMicros(nanoseconds: atNs)) for \(rigs.sorted().joined(separator: ", "))")
        if rigs.contains(settings.name) { schedule(step: m, atNs: atNs) }
    }
}

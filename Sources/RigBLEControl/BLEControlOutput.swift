import FoundationEssentials
import Glibc
import Logging
import RigBluetooth
import RigCore
import RigDBus
import RigRuntime
import Synchronization

/// A BLEControl servo board (STM32 + HM-10-style BLE module, service FFE0, characteristic
/// FFE1) as a rig output, reached through BlueZ over D-Bus.
///
/// - `start` refuses channels ≥ 8, connects (scan filtered by FFE0 and the rig's address
///   or name, preferring the board remembered from the last run), sends INIT alone and
///   ANALOG_OUT_EN for every used channel, both with response, and blocks until the link
///   is ready or `connectTimeoutSeconds` passed (the error names the adapter and filter).
/// - `write` (loop thread) turns commands into wire values — SERVO_VAL = pulse − 1000 µs
///   clamped to 0…1000 (the board's servo range is 1000–2000 µs: map the rig's calibration
///   into it; a clamped axis is warned about once), PWM_VAL = duty per mille of 20 ms —
///   runs the ``BLEControlScheduler`` at once (pure and cheap) and hands the packed writes
///   to the sender thread through a preallocated ring. `sent[i]` is the pulse the board
///   gets from what was handed over this tick (NaN when the channel was not sent), so a
///   trace shows exactly what the board got. While the link is down nothing is sent; the
///   targets keep updating and the first ticks after a reconnect send the current pose.
/// - `shutdown` sends each channel's safe value; a `.off` channel is disabled
///   (ANALOG_OUT_EN channel, 0: the board has no "off" value, and a servo fed no pulses
///   goes limp), then disconnects.
/// - ``showText(line1:line2:)`` puts two lines on the board's 16×2 LCD, any thread.
///
/// Threads: `start`, `write` and `shutdown` are called in turn (the control loop hands the
/// output from the starting thread to the loop thread), and only they touch the scheduler;
/// ``showText(line1:line2:)``, ``statusLine``, ``counters`` and ``linkState`` are safe from
/// any thread (locks or atomics), hence `@unchecked Sendable`.
public final class BLEControlOutput: Output, @unchecked Sendable {
    public let config: BLEControlOutputConfig
    public let label: String
    /// What was handed to the link per tick (for budget checks and diagnostics).
    public let traffic: BLEControlTraffic

    private let logger: Logger
    private let link: BLEControlLink
    private let clock: any LoopClock
    private let memory: BLEControlBoardMemory?
    /// The pose last sent, so the next run eases from it instead of jumping to home.
    private let pose: RememberedPose?
    private var boardChannels: [Int] = []

    // Loop-thread state.
    private var scheduler: BLEControlScheduler
    private var kinds: [UInt8] = []
    private var started = false
    private var tick = 0
    private var lastGeneration = 0
    private var lastResync = 0
    private var lastTextGeneration = 0
    private var clampedMask: UInt32 = 0

    private struct TextRequest: Sendable {
        var generation = 0
        var line0 = BLEControlLCDLine.blank
        var line1 = BLEControlLCDLine.blank
    }
    private let text = Mutex(TextRequest())

    /// - Parameters:
    ///   - bus: where BlueZ is (`.system` honours `DBUS_SYSTEM_BUS_ADDRESS`); tests pass a
    ///     private bus's address.
    ///   - stateDirectory: where the last board is remembered; nil remembers none.
    ///   - clock: the scheduler's time source (the loop's monotonic clock by default).
    public init(
        config: BLEControlOutputConfig, logger: Logger, bus: DBusConnection.Bus = .system,
        stateDirectory: String? = StateDirectory.default(),
        clock: any LoopClock = MonotonicClock(), traffic: BLEControlTraffic = BLEControlTraffic()
    ) {
        self.config = config
        self.logger = logger
        self.clock = clock
        self.traffic = traffic
        var filter = BlueZDeviceFilter(serviceUUID: BLEControlProfile.service.uuid, address: config.address, name: config.name)
        filter.address = config.address
        label = "blecontrol \(config.adapter)" + (config.address.map { " \($0)" } ?? "") + (config.name.map { " \"\($0)\"" } ?? "")
        memory = stateDirectory.map { BLEControlBoardMemory(directory: $0, adapter: config.adapter) }
        let poseName = "blecontrol-\(config.adapter)-\(config.address ?? config.name ?? "any")-pose.json"
            .map { $0 == "/" ? "_" : $0 }
        pose = stateDirectory.map { RememberedPose(filePath: $0 + "/" + String(poseName), channels: BLEControlCommand.channelCount) }
        if let problem = pose?.loadProblem { logger.warning("blecontrol: \(problem)") }
        let settings = BLEControlLink.Settings(
            adapter: config.adapter, filter: filter, preferredAddress: nil,
            connectTimeout: .milliseconds(Int(config.connectTimeoutSeconds * 1000)),
            maxWriteBytes: config.maxWriteBytes, linkBytesPerSecond: config.linkBytesPerSecond,
            boardChannels: [], axisNames: [], memory: memory)
        link = BLEControlLink(settings: settings, bus: bus, logger: logger)
        scheduler = BLEControlScheduler(
            boardChannels: [], commands: [], maxWriteBytes: config.maxWriteBytes,
            linkBytesPerSecond: config.linkBytesPerSecond)
    }

    /// The link `start` made for the rig's channels: read by the loop thread without a lock…
    private var linkForChannels: BLEControlLink?
    /// …and by other threads through this one.
    private let sharedLink = Mutex<BLEControlLink?>(nil)

    private var currentLink: BLEControlLink { sharedLink.withLock { $0 } ?? link }

    public var statusLine: String? {
        let current = currentLink
        var line = current.state.description
        let dropped = current.droppedWrites.load(ordering: .relaxed)
        if dropped > 0 { line += ", \(dropped) writes dropped" }
        return line
    }

    /// Counters for diagnostics: writes and bytes the sender put on the link, writes
    /// dropped (stale, or EAGAIN), commands the board rejected.
    public var counters: (sentWrites: Int, sentBytes: Int, droppedWrites: Int, rejectedCommands: Int) {
        let current = currentLink
        return (
            current.sentWrites.load(ordering: .relaxed), current.sentBytes.load(ordering: .relaxed),
            current.droppedWrites.load(ordering: .relaxed), current.rejectedCommands.load(ordering: .relaxed)
        )
    }

    /// The link's connection state.
    public var linkState: BLEControlLinkState { currentLink.state }

    // MARK: - Output

    /// One lock per board on an adapter (`blecontrol-hci0-AA:BB:…`, or `…-any` when the
    /// rig file names no board and the first one found is used).
    public var exclusiveResources: [String] {
        ["blecontrol-\(config.adapter)-\(config.address ?? config.name ?? "any")"]
    }

    public func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        guard initial.count == channels.count else {
            throw OutputFault(.misuse, device: label, "\(initial.count) initial commands for \(channels.count) channels")
        }
        var seen = Set<Int>()
        for channel in channels {
            guard (0..<BLEControlCommand.channelCount).contains(channel.channel), seen.insert(channel.channel).inserted else {
                throw OutputFault(
                    .misuse, device: label, "channel \(channel.channel) (axis \"\(channel.axisName)\") is out of the board's range 0…7 or used twice")
            }
        }
        guard channels.count <= 32 else { throw OutputFault(.misuse, device: label, "too many channels") }
        kinds = channels.map { $0.kind == .pwm ? BLEControlCommand.pwmValue : BLEControlCommand.servoValue }
        boardChannels = channels.map(\.channel)
        scheduler = BLEControlScheduler(
            boardChannels: channels.map(\.channel), commands: kinds,
            maxWriteBytes: config.maxWriteBytes, linkBytesPerSecond: config.linkBytesPerSecond)
        for (index, command) in initial.enumerated() { setTarget(index, command) }

        var settings = link.settings
        settings.boardChannels = channels.map(\.channel)
        settings.axisNames = channels.map(\.axisName)
        if config.address == nil, let remembered = memory?.load() {
            settings.preferredAddress = remembered.address
            logger.debug("blecontrol: preferring the last board, \(remembered.address)")
        }
        let configured = BLEControlLink(settings: settings, bus: link.busAddress, logger: logger)
        linkForChannels = configured
        sharedLink.withLock { $0 = configured }
        do {
            try configured.start()
        } catch {
            throw OutputFault(.link, device: label, "\(error)")
        }
        started = true
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        guard started, let link = linkForChannels, commands.count == kinds.count, sent.count == commands.count else {
            throw OutputFault(
                .misuse, device: label, "write of \(commands.count) commands (\(sent.count) results) to \(started ? kinds.count : 0) started channels")
        }
        tick += 1
        link.currentTick.store(tick, ordering: .relaxed)
        for index in commands.indices {
            setTarget(index, commands[index])
            sent[index] = .nan
        }
        if clampedMask != 0 { link.clampedChannels.store(clampedMask, ordering: .relaxed) }
        let request = text.withLock { $0 }
        if request.generation != lastTextGeneration {
            lastTextGeneration = request.generation
            scheduler.setText(request.line0, request.line1)
        }

        let generation = link.readyGeneration.load(ordering: .acquiring)
        guard generation != 0 else { return }
        if generation != lastGeneration {
            lastGeneration = generation
            scheduler.invalidateBoard()
        }
        let resync = link.resyncRequests.load(ordering: .acquiring)
        if resync != lastResync {
            lastResync = resync
            scheduler.invalidateBoard()
        }

        let now = Double(clock.now()) / 1e9
        scheduler.tick(nowSeconds: now, maxWrites: link.ring.freeSlots)
        let count = scheduler.writeCount
        guard count > 0 else { return }
        var largest = 0
        for write in 0..<count {
            let length = scheduler.writeLengths[write]
            largest = max(largest, length)
            link.ring.push(
                scheduler.writeBuffer, start: write * scheduler.maxWriteBytes, length: length,
                tick: tick, generation: generation)
        }
        for index in commands.indices where scheduler.sentValues[index] >= 0 {
            let microseconds = BLEControlCommand.pulseMicroseconds(command: kinds[index], value: scheduler.sentValues[index])
            sent[index] = microseconds
            pose?.record(
                channel: boardChannels[index],
                kinds[index] == BLEControlCommand.pwmValue
                    ? .duty(percent: microseconds / BLEControlCommand.pwmPeriodMicroseconds * 100) : .pulse(microseconds: microseconds))
        }
        link.wakeSender()
        traffic.record(timeSeconds: now, bytes: scheduler.bytesThisTick, writes: count, largestWrite: largest)
    }

    public func shutdown(safe: [ChannelCommand]) {
        guard started, let link = linkForChannels else { return }
        started = false
        var commands: [BLEControlLink.SafeCommand] = []
        for (index, command) in safe.enumerated() where index < kinds.count {
            let channel = link.settings.boardChannels[index]
            switch command {
            case .off:
                commands.append(.disable(channel: channel))
            case .pulse(let microseconds):
                commands.append(
                    .value(
                        command: kinds[index], channel: channel,
                        value: wireValue(kinds[index], .pulse(microseconds: microseconds)).value))
            case .duty(let percent):
                commands.append(
                    .value(
                        command: kinds[index], channel: channel,
                        value: wireValue(kinds[index], .duty(percent: percent)).value))
            }
        }
        link.stop(safe: commands)
        persistState()
    }

    /// The pose the last run left the board at (what it sent last), if it was this kind of channel.
    public func lastKnownCommand(for channel: OutputChannel) -> ChannelCommand? {
        switch (channel.kind, pose?.remembered(channel: channel.channel)) {
        case (.servo, .pulse(let us)?): .pulse(microseconds: us)
        case (.pwm, .duty(let percent)?): .duty(percent: percent)
        default: nil
        }
    }

    /// Saves the pose last sent if it changed (the session calls this every 0.25 s).
    public func persistState() {
        do { try pose?.save() } catch { logger.warning("blecontrol: \(error)") }
    }

    // MARK: - LCD

    /// Shows two lines on the board's LCD (15 characters each: the firmware's 16-byte line buffer holds the terminator; accents folded to ASCII,
    /// longer text cut). Sent only when it differs from what the board shows, at most one
    /// LCD command per 0.3 s (LCD_TEXT stalls the board), each alone in its write and
    /// within the byte budget; two empty lines send one LCD_CLEAR. Any thread.
    public func showText(line1: String, line2: String) {
        let first = BLEControlLCDLine(line1)
        let second = BLEControlLCDLine(line2)
        text.withLock { request in
            request.generation += 1
            request.line0 = first
            request.line1 = second
        }
    }

    // MARK: - Encoding

    @inline(__always)
    private func setTarget(_ index: Int, _ command: ChannelCommand) {
        if case .off = command {
            scheduler.clearTarget(index)
            return
        }
        let (value, clamped) = wireValue(kinds[index], command)
        if clamped { clampedMask |= 1 << UInt32(index) }
        scheduler.setTarget(index, value: value)
    }

    @inline(__always)
    private func wireValue(_ kind: UInt8, _ command: ChannelCommand) -> (value: Int, clamped: Bool) {
        switch (kind, command) {
        case (BLEControlCommand.pwmValue, .duty(let percent)):
            return (BLEControlCommand.pwmValue(dutyPercent: percent), false)
        case (BLEControlCommand.pwmValue, .pulse(let microseconds)):
            return (BLEControlCommand.pwmValue(dutyPercent: microseconds / BLEControlCommand.pwmPeriodMicroseconds * 100), false)
        case (_, .pulse(let microseconds)):
            let servo = BLEControlCommand.servoValue(pulseMicroseconds: microseconds)
            return (servo.value, servo.clamped)
        case (_, .duty(let percent)):
            let servo = BLEControlCommand.servoValue(pulseMicroseconds: percent / 100 * BLEControlCommand.pwmPeriodMicroseconds)
            return (servo.value, servo.clamped)
        case (_, .off):
            return (0, false)
        }
    }
}

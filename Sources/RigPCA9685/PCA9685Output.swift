import Logging
import RigCore
import RigRuntime
import Synchronization
import SystemPackage

/// A PCA9685 16-channel PWM chip on a Linux I2C bus, as a rig output.
///
/// - `start` opens the bus (unless one was passed in), reads MODE1 and PRE_SCALE, and
///   initialises the chip as the datasheet says: MODE1 = SLEEP | AI (ALLCALL and SUBx
///   cleared), MODE2 = OUTDRV (totem pole), PRE_SCALE, then all sixteen channels' registers
///   with the initial pose, *then* wake (SLEEP cleared), wait ≥ 500 µs, RESTART. A chip
///   that is already awake with the right PRE_SCALE (the program restarted, the board
///   did not) is not put to sleep: its registers are rewritten in place, without a glitch.
/// - `write` programs only the registers that changed, in the fewest bus bytes
///   (``PCA9685BurstPlanner``: adjacent changes in one auto-increment burst, gaps skipped,
///   a channel never split over two transactions), from preallocated buffers: nothing
///   allocates per frame.
///   It reads MODE1 and PRE_SCALE back once per ``healthCheckInterval`` (MODE1 on one
///   tick, PRE_SCALE on the next) and right after any bus error; a chip found reset (a
///   brown-out: the servo supply sagged and took the logic supply with it) is initialised
///   again with the last frame, and a warning is logged.
/// - Transient bus errors are retried per ``I2CRetryPolicy`` (≤ 1.75 ms of waiting by
///   default, on the loop thread); a persistent one throws `OutputFault` naming the bus,
///   the address, the errno and what to check.
/// - `shutdown` writes each channel's safe command (`.off` → full off; held channels keep
///   their pulse) and saves the last driven pose to the ``PCA9685StateStore`` file, which
///   ``savedPose()`` reads back on the next start.
///
/// `sent[i]` reports the high time actually programmed, from the counts: for a `.pulse`
/// command `counts × period / 4096` µs at the chip's real period; for a `.duty` command
/// `counts / 4096 × servoFramePeriodMicroseconds` (the period every output reports pwm
/// in); 0 for `.off`. Every channel is reported every tick: the chip keeps producing
/// unchanged channels' pulses.
public final class PCA9685Output: Output {
    public let config: PCA9685OutputConfig
    public let label: String
    /// Where the last pose is kept; nil when no state directory was given.
    public let stateStore: PCA9685StateStore?
    /// How often MODE1 and PRE_SCALE are read back to detect a reset chip.
    public let healthCheckInterval: Duration

    /// The PRE_SCALE value programmed for `config.frequencyHz` and `config.oscillatorHz`.
    public let prescale: UInt8
    /// The real PWM period that PRE_SCALE gives, in µs.
    public let periodMicroseconds: Double

    private var bus: (any I2CBus)?
    private let logger: Logger
    private let clock: any LoopClock
    private let retryPolicy: I2CRetryPolicy
    private let status = Mutex("not started")

    private var channelNumbers: [Int] = []
    /// What each of the 16 channels should show (the last commanded frame).
    private var desired: [PCA9685ChannelRegisters]
    /// What the chip holds, as far as we know.
    private var programmed: [PCA9685ChannelRegisters]
    /// One flag per LED register (64): differs from what the chip holds.
    private var changed: [Bool]
    private var planner = PCA9685BurstPlanner()
    /// One SMBus block: 32 bytes, allocated once.
    private let buffer: UnsafeMutableRawBufferPointer

    /// Between a successful `start` and `shutdown`.
    private var started = false
    private var nextHealthCheck: Duration = .zero
    private var prescaleCheckPending = false
    private var verifyNow = false

    /// Times a reset chip was found and initialised again.
    private(set) var recoveries = 0
    /// Transfers that failed and were tried again.
    private(set) var retries = 0

    /// The output for `config`'s board.
    ///
    /// - Parameters:
    ///   - bus: the I2C bus; nil opens `config.bus` through i2c-dev in `start`.
    ///   - stateDirectory: where the last pose is kept
    ///     (``StateDirectory/default(environment:isRoot:)``); nil keeps none.
    ///   - clock: sleeps the wake wait and the retry backoff, and times the periodic
    ///     read-back; tests pass one that records instead of sleeping.
    public init(
        config: PCA9685OutputConfig, bus: (any I2CBus)? = nil,
        stateDirectory: String? = StateDirectory.default(), logger: Logger,
        clock: any LoopClock = MonotonicClock(), retryPolicy: I2CRetryPolicy = .default,
        healthCheckInterval: Duration = .seconds(1)
    ) {
        self.config = config
        self.bus = bus
        self.logger = logger
        self.clock = clock
        self.retryPolicy = retryPolicy
        self.healthCheckInterval = healthCheckInterval
        label = "pca9685 \(config.bus) 0x\(String(config.address, radix: 16))"
        stateStore = stateDirectory.map { PCA9685StateStore(directory: $0, bus: config.bus, address: config.address) }
        prescale = PCA9685Math.prescale(frequencyHz: config.frequencyHz, oscillatorHz: config.oscillatorHz)
        periodMicroseconds = PCA9685Math.periodMicroseconds(prescale: prescale, oscillatorHz: config.oscillatorHz)
        desired = Array(repeating: .fullOff, count: PCA9685Register.channelCount)
        programmed = desired
        changed = Array(repeating: false, count: PCA9685BurstPlanner.registerCount)
        buffer = .allocate(byteCount: i2cSMBusBlockMax, alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        stateStore?.setPeriod(microseconds: periodMicroseconds)
    }

    deinit {
        buffer.deallocate()
    }

    public var statusLine: String? { status.withLock { $0 } }

    /// The pose the previous run left the servos in, if it was saved: pass
    /// `savedPose()?.command(for: channel)` (turned into the motion core's start pose) as
    /// `start`'s `initial` so nothing moves at power-up. Call before `start`.
    public func savedPose() -> PCA9685SavedPose? {
        guard let stateStore else { return nil }
        do { return try stateStore.load() } catch {
            logger.warning("\(error)")
            return nil
        }
    }

    // MARK: - Output

    public func start(channels: [OutputChannel], initial: [ChannelCommand]) throws {
        guard initial.count == channels.count else {
            throw OutputFault(.misuse, device: label, "\(initial.count) initial commands for \(channels.count) channels")
        }
        var seen = Set<Int>()
        for channel in channels {
            guard (0..<PCA9685Register.channelCount).contains(channel.channel), seen.insert(channel.channel).inserted else {
                throw OutputFault(.misuse, device: label, "channel \(channel.channel) (axis \"\(channel.axisName)\") is out of range 0…15 or used twice")
            }
        }
        channelNumbers = channels.map(\.channel)
        if bus == nil {
            do { bus = try LinuxI2CBus(path: config.bus) } catch { throw fault(error, attempts: 1) }
        }
        for channel in 0..<PCA9685Register.channelCount { desired[channel] = .fullOff }
        for (index, command) in initial.enumerated() {
            desired[channelNumbers[index]] = registers(for: command, channel: channelNumbers[index]).registers
        }

        let mode1 = PCA9685Mode1(rawValue: try read(PCA9685Register.mode1))
        let currentPrescale = try read(PCA9685Register.preScale)
        if !mode1.contains(.sleep), currentPrescale == prescale {
            try initialiseAwake()
            logger.info("\(label): chip was running at PRE_SCALE \(prescale); registers rewritten without sleeping")
        } else {
            try initialiseFromSleep()
        }
        nextHealthCheck = clock.elapsed + healthCheckInterval
        started = true
        status.withLock { $0 = "ready" }
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        guard started, commands.count == channelNumbers.count, sent.count == commands.count else {
            throw OutputFault(
                .misuse, device: label, "write of \(commands.count) commands (\(sent.count) results) to \(started ? channelNumbers.count : 0) started channels")
        }
        for index in commands.indices {
            let channel = channelNumbers[index]
            let encoded = registers(for: commands[index], channel: channel)
            desired[channel] = encoded.registers
            sent[index] = encoded.sentMicroseconds
        }
        try flush()
        try checkHealth()
    }

    public func shutdown(safe: [ChannelCommand]) {
        defer {
            saveState()
            bus = nil
            started = false
            status.withLock { $0 = "stopped" }
        }
        // A chip we never initialised is left alone (start failed before it got that far).
        guard started else { return }
        if safe.count == channelNumbers.count {
            for (index, command) in safe.enumerated() {
                desired[channelNumbers[index]] = registers(for: command, channel: channelNumbers[index]).registers
            }
        } else {
            logger.error("\(label): \(safe.count) safe commands for \(channelNumbers.count) channels; turning every channel off")
            for channel in 0..<PCA9685Register.channelCount { desired[channel] = .fullOff }
        }
        do {
            try flush()
            verifyNow = true
            try checkHealth()
        } catch {
            logger.error("\(label): could not put the channels in their safe state: \(error)")
        }
    }

    /// Saves the last driven pose now (shutdown does this too). Not on the loop thread.
    public func saveState() {
        do { try stateStore?.save() } catch { logger.warning("\(error)") }
    }

    public var pwmPeriodMicroseconds: Double { periodMicroseconds }

    public func lastKnownCommand(for channel: OutputChannel) -> ChannelCommand? {
        savedPose()?.command(for: channel)
    }

    public func persistState() { saveState() }

    /// One lock per board: bus and address (`pca9685-i2c-1-0x40`).
    public var exclusiveResources: [String] {
        let busName = config.bus.split(separator: "/").last.map(String.init) ?? "bus"
        return ["pca9685-\(busName)-0x\(String(config.address, radix: 16))"]
    }

    // MARK: - Encoding

    /// Channel `n`'s ON count: 0, or spread over the period with `phaseStagger` (n × 256,
    /// as Linux's pwm-pca9685 staggers) so the sixteen pulses do not all rise at once.
    @inline(__always)
    private func phase(channel: Int) -> Int {
        config.phaseStagger ? channel * (PCA9685Math.countsPerPeriod / PCA9685Register.channelCount) : 0
    }

    @inline(__always)
    private func registers(for command: ChannelCommand, channel: Int) -> (registers: PCA9685ChannelRegisters, sentMicroseconds: Double) {
        switch command {
        case .off:
            return (.fullOff, 0)
        case .pulse(let microseconds):
            let counts = PCA9685Math.counts(pulseMicroseconds: microseconds, periodMicroseconds: periodMicroseconds)
            return (
                .pulse(counts: counts, phase: phase(channel: channel)),
                PCA9685Math.pulseMicroseconds(counts: counts, periodMicroseconds: periodMicroseconds)
            )
        case .duty(let percent):
            let counts = PCA9685Math.counts(dutyPercent: percent)
            return (
                .pulse(counts: counts, phase: phase(channel: channel)),
                PCA9685Math.pulseMicroseconds(counts: counts, periodMicroseconds: periodMicroseconds)
            )
        }
    }

    // MARK: - Bus traffic

    /// Writes every register whose desired value differs from the programmed one.
    private func flush() throws(OutputFault) {
        let perChannel = PCA9685Register.bytesPerChannel
        for channel in 0..<PCA9685Register.channelCount {
            let want = desired[channel]
            let have = programmed[channel]
            for k in 0..<perChannel { changed[channel * perChannel + k] = want.byte(k) != have.byte(k) }
        }
        try writeBursts()
    }

    /// Writes the registers flagged in `changed`, burst by burst.
    private func writeBursts() throws(OutputFault) {
        let perChannel = PCA9685Register.bytesPerChannel
        let count = planner.plan(changed: changed)
        for index in 0..<count {
            let (first, bytes) = planner.burst(index)
            for offset in 0..<bytes {
                let register = first + offset
                buffer[offset] = desired[register / perChannel].byte(register % perChannel)
            }
            let data = UnsafeRawBufferPointer(rebasing: buffer[0..<bytes])
            let register = PCA9685Register.ledOnL(channel: 0) &+ UInt8(truncatingIfNeeded: first)
            try transfer { bus throws(I2CError) in try bus.writeBlock(address: config.address, register: register, data: data) }
            // The planner keeps each channel's changes in one burst, and the registers of a
            // channel outside it already held their values: the touched channels are done.
            for channel in (first / perChannel)...((first + bytes - 1) / perChannel) {
                programmed[channel] = desired[channel]
                let counts = desired[channel].highCounts
                if counts > 0 { stateStore?.record(channel: channel, counts: counts) }
            }
        }
    }

    /// Runs one transfer with the retry policy; a persistent failure becomes an OutputFault.
    @inline(__always)
    private func transfer<T>(_ body: (any I2CBus) throws(I2CError) -> T) throws(OutputFault) -> T {
        guard let bus else { throw OutputFault(.misuse, device: label, "the bus is closed") }
        var attempt = 0
        while true {
            do {
                return try body(bus)
            } catch {
                verifyNow = true
                guard error.isTransient, attempt < retryPolicy.backoff.count else {
                    throw fault(error, attempts: attempt + 1)
                }
                clock.sleep(for: retryPolicy.backoff[attempt])
                attempt += 1
                retries += 1
            }
        }
    }

    private func read(_ register: UInt8) throws(OutputFault) -> UInt8 {
        try transfer { bus throws(I2CError) in try bus.readByte(address: config.address, register: register) }
    }

    private func write(_ register: UInt8, _ value: UInt8) throws(OutputFault) {
        try transfer { bus throws(I2CError) in try bus.writeByte(address: config.address, register: register, value: value) }
    }

    // MARK: - Initialisation

    /// The datasheet's sequence: sleep, configure, load the frame, wake, ≥ 500 µs, restart.
    private func initialiseFromSleep() throws(OutputFault) {
        let awake: PCA9685Mode1 = [.autoIncrement]
        // SLEEP | AI, with ALLCALL, SUB1…3 and RESTART written as 0.
        try write(PCA9685Register.mode1, (awake.union(.sleep)).rawValue)
        try write(PCA9685Register.mode2, PCA9685Mode2.outDrv.rawValue)
        try write(PCA9685Register.preScale, prescale)
        try loadAllChannels()
        try write(PCA9685Register.mode1, awake.rawValue)
        clock.sleep(for: Self.oscillatorStartup)
        try write(PCA9685Register.mode1, awake.union(.restart).rawValue)
        try verifyInitialised()
    }

    /// For a chip already running at our PRE_SCALE: configure and load the frame, no sleep.
    private func initialiseAwake() throws(OutputFault) {
        try write(PCA9685Register.mode1, PCA9685Mode1.autoIncrement.rawValue)
        try write(PCA9685Register.mode2, PCA9685Mode2.outDrv.rawValue)
        try loadAllChannels()
        try verifyInitialised()
    }

    /// The datasheet's wait between clearing SLEEP and writing RESTART (oscillator start-up).
    static let oscillatorStartup: Duration = .microseconds(500)

    private func loadAllChannels() throws(OutputFault) {
        for register in 0..<PCA9685BurstPlanner.registerCount { changed[register] = true }
        try writeBursts()
    }

    private func verifyInitialised() throws(OutputFault) {
        let mode1 = PCA9685Mode1(rawValue: try read(PCA9685Register.mode1))
        let readPrescale = try read(PCA9685Register.preScale)
        guard readPrescale == prescale, !mode1.contains(.sleep), mode1.contains(.autoIncrement) else {
            throw OutputFault(
                .wrongDevice, device: label,
                "after initialisation MODE1 reads \(hex(mode1.rawValue)) and PRE_SCALE \(readPrescale) "
                    + "(expected AI set, SLEEP clear, PRE_SCALE \(prescale)). Is the chip at \(hex(UInt8(config.address))) a PCA9685? "
                    + "`rig probe i2c` shows what answers on \(config.bus).")
        }
    }

    // MARK: - Brown-out detection

    /// Reads MODE1 and PRE_SCALE back: both at once after a bus error, otherwise one per
    /// tick once per interval, so a check costs 4 bus bytes on two ticks.
    private func checkHealth() throws(OutputFault) {
        if verifyNow {
            verifyNow = false
            let mode1 = try read(PCA9685Register.mode1)
            let readPrescale = try read(PCA9685Register.preScale)
            try recoverIfReset(mode1: mode1, prescale: readPrescale)
            prescaleCheckPending = false
            nextHealthCheck = clock.elapsed + healthCheckInterval
            return
        }
        let now = clock.elapsed
        guard prescaleCheckPending || now >= nextHealthCheck else { return }
        if prescaleCheckPending {
            prescaleCheckPending = false
            nextHealthCheck = now + healthCheckInterval
            try recoverIfReset(mode1: nil, prescale: try read(PCA9685Register.preScale))
        } else {
            prescaleCheckPending = true
            try recoverIfReset(mode1: try read(PCA9685Register.mode1), prescale: nil)
        }
    }

    private func recoverIfReset(mode1 rawMode1: UInt8?, prescale readPrescale: UInt8?) throws(OutputFault) {
        let mode1 = rawMode1.map(PCA9685Mode1.init(rawValue:))
        let modeLost = mode1.map { $0.contains(.sleep) || $0.contains(.allCall) || !$0.contains(.autoIncrement) } ?? false
        let prescaleLost = readPrescale.map { $0 != prescale } ?? false
        guard modeLost || prescaleLost else { return }
        recoveries += 1
        let found = [rawMode1.map { "MODE1 \(hex($0))" }, readPrescale.map { "PRE_SCALE \($0)" }].compactMap { $0 }.joined(separator: ", ")
        logger.warning(
            "\(label): the chip was reset (\(found); power-on values are MODE1 \(hex(PCA9685Mode1.powerOn.rawValue)), PRE_SCALE \(PCA9685Register.preScalePowerOn)): the servo supply probably sagged (brown-out). Re-initialising and restoring the last frame. Power the servos from their own supply with a common ground."
        )
        status.withLock { $0 = "recovered from a chip reset (\(recoveries)×)" }
        prescaleCheckPending = false
        try initialiseFromSleep()
        nextHealthCheck = clock.elapsed + healthCheckInterval
    }

    // MARK: - Errors

    private func fault(_ error: I2CError, attempts: Int) -> OutputFault {
        let tries = attempts > 1 ? " after \(attempts) attempts" : ""
        let address = hex(UInt8(config.address))
        let hint: String
        switch error.errno {
        case _ where error.errno.rawValue == remoteIOErrnoValue, .noSuchAddressOrDevice,
            // ENODEV from a transfer (not from open): some adapters (i2c-stub) say that
            // for an address nothing answers at.
            .operationNotSupportedByDevice where error.operation != .open:
            hint =
                "Nothing acknowledged address \(address): check that the board's VCC (3.3–5 V logic supply) is powered, "
                + "that SDA, SCL and GND are wired, and that the address jumpers A0–A5 match \"address\" in the rig file "
                + "(`rig probe i2c` lists the addresses that answer)."
        case .ioError, .timedOut, .resourceTemporarilyUnavailable:
            hint =
                "The bus failed mid-transfer: check the wiring (short SDA/SCL leads, pull-ups, one common ground) and the "
                + "power: servos on V+ from their own supply; a sagging supply resets or upsets the chip."
        case .resourceBusy:
            hint = "A kernel driver owns address \(address) (a pwm-pca9685 device-tree overlay?): remove the overlay or unbind the driver."
        case .noSuchFileOrDirectory, .operationNotSupportedByDevice:
            hint =
                "No such I2C bus: enable I2C (raspi-config, or dtparam=i2c_arm=on in config.txt), load i2c-dev "
                + "(modprobe i2c-dev), and check the bus number (ls /dev/i2c-*)."
        case .permissionDenied, .notPermitted:
            hint = "Permission denied: add the user to the i2c group (sudo adduser $USER i2c) and log in again."
        default:
            hint = "Check the board's power and wiring, and the \"bus\" and \"address\" in the rig file."
        }
        status.withLock { $0 = "failed: \(errnoName(error.errno))" }
        return OutputFault(
            .system(errno: error.errno.rawValue), device: "pca9685 at \(address) on \(config.bus)",
            "\(error.action) failed\(tries): \(error.errnoText). \(hint)")
    }
}

func hex(_ value: UInt8) -> String {
    "0x" + (value < 0x10 ? "0" : "") + String(value, radix: 16, uppercase: true)
}

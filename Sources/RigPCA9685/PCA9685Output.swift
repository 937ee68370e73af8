import Logging
import RigCore
import RigRuntime
import Synchronization
import SystemPackage

/// A PCA9685 16-channel PWM chip on a Linux I2C bus, as a rig output: the adapter between
/// the rig's channels and commands and the chip (`PCA9685Chip`, which owns the registers,
/// the bus traffic, initialisation and brown-out recovery).
///
/// - `start` checks the channels, sets the initial pose's registers and initialises the
///   chip (opening the bus unless one was passed in); a chip already running at the right
///   PRE_SCALE is rewritten in place, without a glitch.
/// - `write` encodes each command as its channel's registers (phase-staggered if asked)
///   and flushes the changed ones, then lets the chip check its health: nothing allocates
///   per frame. Transient bus errors are retried per ``I2CRetryPolicy`` (≤ 1.75 ms of
///   waiting by default, on the loop thread); a persistent one throws `OutputFault` naming
///   the bus, the address, the errno and what to check.
/// - `shutdown` writes each channel's safe command (`.off` → full off; held channels keep
///   their pulse) and saves the last driven pose to the ``PCA9685StateStore`` file, which
///   ``savedPose()`` reads back on the next start.
///
/// `sent[i]` reports the high time actually programmed, from the counts: for a `.pulse`
/// command `counts × period / 4096` µs at the chip's real period; for a `.duty` command
/// `counts / 4096 × servoFramePeriodMicroseconds` (the period every output reports pwm
/// in); 0 for `.off`. Every channel is reported every tick: the chip keeps producing
/// unchanged channels' pulses.
///
/// With `countTrim` set (`OutputDrivers.make` sets it from the rig), a shaped servo axis's
/// count is moved by the one-count trim after its moves (`CountTrim`: only where the PWM
/// period is one loop tick); `sent` reports the trimmed pulse.
public final class PCA9685Output: Output {
    public let config: PCA9685OutputConfig
    public let label: String
    /// Where the last pose is kept; nil when no state directory was given.
    public let stateStore: PCA9685StateStore?
    /// How often MODE1 and PRE_SCALE are read back to detect a reset chip.
    public var healthCheckInterval: Duration { chip.healthCheckInterval }

    /// The PRE_SCALE value programmed for `config.frequencyHz` and `config.oscillatorHz`.
    public var prescale: UInt8 { chip.prescale }
    /// The real PWM period that PRE_SCALE gives, in µs.
    public let periodMicroseconds: Double

    private let chip: PCA9685Chip
    private let logger: Logger
    private var channelNumbers: [Int] = []
    /// Between a successful `start` and `shutdown`.
    private var started = false
    /// The one-count trim of the rig's axes (in `start` order), if it can work here: set
    /// before `start` (`CountTrim(rig:periodMicroseconds:)` with this output's real
    /// `periodMicroseconds`).
    public var countTrim: CountTrim?

    /// Times a reset chip was found and initialised again.
    var recoveries: Int { chip.recoveries }
    /// Transfers that failed and were tried again.
    var retries: Int { chip.retries }

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
        self.logger = logger
        label = "pca9685 \(config.bus) 0x\(String(config.address, radix: 16))"
        stateStore = stateDirectory.map { PCA9685StateStore(directory: $0, bus: config.bus, address: config.address) }
        chip = PCA9685Chip(
            config: config, label: label, bus: bus, stateStore: stateStore, logger: logger, clock: clock, retryPolicy: retryPolicy,
            healthCheckInterval: healthCheckInterval)
        periodMicroseconds = PCA9685Math.periodMicroseconds(prescale: chip.prescale, oscillatorHz: config.oscillatorHz)
        stateStore?.setPeriod(microseconds: periodMicroseconds)
    }

    public var statusLine: String? { chip.status.withLock { $0 } }

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
        chip.allOff()
        for (index, command) in initial.enumerated() {
            let encoded = registers(for: command, channel: channelNumbers[index])
            chip.set(channelNumbers[index], encoded.registers)
            // The camera rests on the first pulse sent (the trim's model starts there).
            if case .pulse = command { countTrim?.start(axis: index, quantizedMicroseconds: encoded.sentMicroseconds) }
        }
        try chip.initialise()
        started = true
        chip.status.withLock { $0 = "ready" }
    }

    public func write(_ commands: [ChannelCommand], sent: inout [Double]) throws(OutputFault) {
        guard started, commands.count == channelNumbers.count, sent.count == commands.count else {
            throw OutputFault(
                .misuse, device: label, "write of \(commands.count) commands (\(sent.count) results) to \(started ? channelNumbers.count : 0) started channels")
        }
        for index in commands.indices {
            let channel = channelNumbers[index]
            var trimCounts = 0
            if countTrim != nil, case .pulse(let microseconds) = commands[index] {
                trimCounts = countTrim?.counts(axis: index, commandedMicroseconds: microseconds, quantizedMicroseconds: quantized(microseconds)) ?? 0
            }
            let encoded = registers(for: commands[index], channel: channel, trimCounts: trimCounts)
            chip.set(channel, encoded.registers)
            sent[index] = encoded.sentMicroseconds
        }
        try chip.flush()
        try chip.checkHealth()
    }

    public func shutdown(safe: [ChannelCommand]) {
        defer {
            saveState()
            chip.close()
            started = false
            chip.status.withLock { $0 = "stopped" }
        }
        // A chip we never initialised is left alone (start failed before it got that far).
        guard started else { return }
        if safe.count == channelNumbers.count {
            for (index, command) in safe.enumerated() {
                chip.set(channelNumbers[index], registers(for: command, channel: channelNumbers[index]).registers)
            }
        } else {
            logger.error("\(label): \(safe.count) safe commands for \(channelNumbers.count) channels; turning every channel off")
            chip.allOff()
        }
        do {
            try chip.flushAndVerify()
        } catch {
            logger.error("\(label): could not put the channels in their safe state: \(error)")
        }
    }

    /// Saves the last driven pose now (shutdown does this too). Not on the loop thread.
    public func saveState() {
        do { try stateStore?.save() } catch { logger.warning("\(error)") }
    }

    public var pwmPeriodMicroseconds: Double { periodMicroseconds }

    public var looksAhead: Bool { countTrim != nil }

    public func expect(pulses: [Double], window: Int, ticks: Int) {
        countTrim?.expect(pulses: pulses, window: window, ticks: ticks) { quantized($0) }
    }

    /// The pulse the chip sends for `microseconds`: rounded to its whole count.
    @inline(__always)
    private func quantized(_ microseconds: Double) -> Double {
        let counts = PCA9685Math.counts(pulseMicroseconds: microseconds, periodMicroseconds: periodMicroseconds)
        return PCA9685Math.pulseMicroseconds(counts: counts, periodMicroseconds: periodMicroseconds)
    }

    /// The chip held its pulses through a stall: a trim under way is lost.
    public func elapsedWithoutWrites(ticks: Int) { countTrim?.cancel() }

    public func lastKnownCommand(for channel: OutputChannel) -> ChannelCommand? {
        savedPose()?.command(for: channel)
    }

    public func persistState() { saveState() }

    /// One lock per board: the bus's device node, however the rig file reaches it (a
    /// symlink, `/dev/./i2c-1`), and the address as a number (`pca9685-i2c-1-0x40`).
    public var exclusiveResources: [String] {
        ["pca9685-\(HardwareLock.deviceNode(config.bus))-0x\(String(config.address, radix: 16))"]
    }

    // MARK: - Encoding

    /// Channel `n`'s ON count: 0, or spread over the period with `phaseStagger` (n × 256,
    /// as Linux's pwm-pca9685 staggers) so the sixteen pulses do not all rise at once.
    @inline(__always)
    private func phase(channel: Int) -> Int {
        config.phaseStagger ? channel * (PCA9685Math.countsPerPeriod / PCA9685Register.channelCount) : 0
    }

    @inline(__always)
    private func registers(
        for command: ChannelCommand, channel: Int, trimCounts: Int = 0
    ) -> (registers: PCA9685ChannelRegisters, sentMicroseconds: Double) {
        switch command {
        case .off:
            return (.fullOff, 0)
        case .pulse(let microseconds):
            // The trim's count stays within the axis's soft limits (`CountTrim` checks).
            let counts = PCA9685Math.counts(pulseMicroseconds: microseconds, periodMicroseconds: periodMicroseconds) + trimCounts
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
}

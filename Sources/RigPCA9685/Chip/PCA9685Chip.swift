import Logging
import RigCore
import RigRuntime
import Synchronization
import SystemPackage

/// The PCA9685 itself on an I2C bus: its sixteen channels' registers, how they reach the
/// chip, its initialisation and its health; what a rig's channels and commands are is the
/// output adapter's (`PCA9685Output`), as Linux splits pwm-pca9685's chip operations from
/// the PWM core.
///
/// - `initialise` reads MODE1 and PRE_SCALE and initialises the chip as the datasheet
///   says: MODE1 = SLEEP | AI (ALLCALL and SUBx cleared), MODE2 = OUTDRV (totem pole),
///   PRE_SCALE, then all sixteen channels' registers, *then* wake (SLEEP cleared), wait
///   ≥ 500 µs, RESTART. A chip already awake with the right PRE_SCALE is not put to sleep:
///   its registers are rewritten in place, without a glitch.
/// - `flush` programs only the registers that changed, in the fewest bus bytes
///   (``PCA9685BurstPlanner``), from preallocated buffers: nothing allocates per frame.
/// - `checkHealth` reads MODE1 and PRE_SCALE back once per `healthCheckInterval` (MODE1 on
///   one tick, PRE_SCALE on the next) and right after any bus error; a chip found reset (a
///   brown-out) is initialised again with the last frame, and a warning is logged.
/// - Transient bus errors are retried per ``I2CRetryPolicy``; a persistent one is an
///   `OutputFault` naming the bus, the address, the errno and what to check.
final class PCA9685Chip {
    let config: PCA9685OutputConfig
    let label: String
    let prescale: UInt8
    let healthCheckInterval: Duration
    /// Told of every channel's high counts as they reach the chip (the saved pose).
    let stateStore: PCA9685StateStore?
    let status = Mutex("not started")

    private var bus: (any I2CBus)?
    private let logger: Logger
    private let clock: any LoopClock
    private let retryPolicy: I2CRetryPolicy

    /// What each of the 16 channels should show (the last commanded frame).
    private var desired: [PCA9685ChannelRegisters]
    /// What the chip holds, as far as we know.
    private var programmed: [PCA9685ChannelRegisters]
    /// One flag per LED register (64): differs from what the chip holds.
    private var changed: [Bool]
    private var planner = PCA9685BurstPlanner()
    /// One SMBus block: 32 bytes, allocated once.
    private let buffer: UnsafeMutableRawBufferPointer

    private var nextHealthCheck: Duration = .zero
    private var prescaleCheckPending = false
    private var verifyNow = false

    /// Times a reset chip was found and initialised again.
    private(set) var recoveries = 0
    /// Transfers that failed and were tried again.
    private(set) var retries = 0

    init(
        config: PCA9685OutputConfig, label: String, bus: (any I2CBus)?, stateStore: PCA9685StateStore?, logger: Logger,
        clock: any LoopClock, retryPolicy: I2CRetryPolicy, healthCheckInterval: Duration
    ) {
        self.config = config
        self.label = label
        self.bus = bus
        self.stateStore = stateStore
        self.logger = logger
        self.clock = clock
        self.retryPolicy = retryPolicy
        self.healthCheckInterval = healthCheckInterval
        prescale = config.prescale
        desired = Array(repeating: .fullOff, count: PCA9685Register.channelCount)
        programmed = desired
        changed = Array(repeating: false, count: PCA9685BurstPlanner.registerCount)
        buffer = .allocate(byteCount: i2cSMBusBlockMax, alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit {
        buffer.deallocate()
    }

    /// What channel `channel` should show from the next `flush` on.
    @inline(__always)
    func set(_ channel: Int, _ registers: PCA9685ChannelRegisters) {
        desired[channel] = registers
    }

    /// Every channel full off (before the first frame, or when the safe states do not fit).
    func allOff() {
        for channel in 0..<PCA9685Register.channelCount { desired[channel] = .fullOff }
    }

    /// Opens the bus (unless one was given) and initialises the chip with the channels set.
    func initialise() throws(OutputFault) {
        if bus == nil {
            do { bus = try LinuxI2CBus(path: config.bus) } catch { throw fault(error, attempts: 1) }
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
    }

    /// The last frame's registers, then a read-back at once (a shutdown's safe states).
    func flushAndVerify() throws(OutputFault) {
        try flush()
        verifyNow = true
        try checkHealth()
    }

    /// Lets go of the bus.
    func close() {
        bus = nil
    }

    // MARK: - Bus traffic

    /// Writes every register whose desired value differs from the programmed one.
    func flush() throws(OutputFault) {
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
    func checkHealth() throws(OutputFault) {
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

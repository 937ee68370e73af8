import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigBluetooth
import RigCore
import RigDBus
import RigFormat
import RigRuntime
import RigSyscall
import Synchronization
import SystemPackage

/// The connection to one BLEControl board, kept alive off the loop thread.
///
/// Two workers, neither of them the loop thread:
/// - the **supervisor** (a task; its D-Bus traffic runs on RigDBus's bus thread) scans,
///   connects, resolves FFE1, subscribes to its notifications, sends INIT alone (with
///   response) and ANALOG_OUT_EN for every channel (with response), acquires a write socket
///   (`AcquireWrite`), then marks the link ready with a new *generation*. It watches for
///   a disconnect and reconnects with bounded backoff; at shutdown it sends the safe
///   commands and disconnects.
/// - the **sender** thread drains ``ring`` (writes the loop thread packed) onto the
///   socket with non-blocking `write()`; `EAGAIN` means the budget was exceeded somewhere:
///   the write is dropped and counted, and the scheduler is asked to resend everything
///   (``resyncRequests``). Without a socket it falls back to `WriteValue` with
///   `{"type": "command"}`. Writes from an older generation or more than two ticks old are
///   dropped the same way.
final class BLEControlLink: Sendable {
    struct Settings: Sendable {
        var adapter: String
        var filter: BlueZDeviceFilter
        var preferredAddress: String?
        var connectTimeout: Duration
        var maxWriteBytes: Int
        var linkBytesPerSecond: Double
        /// Board channel of every used channel, and the axis it drives (for messages).
        var boardChannels: [Int]
        var axisNames: [String]
        var memory: BLEControlBoardMemory?
    }

    /// A command to leave a channel in at shutdown.
    enum SafeCommand: Sendable, Equatable {
        case value(command: UInt8, channel: Int, value: Int)
        case disable(channel: Int)
    }

    /// How many ticks old a packed write may be when the sender gets to it.
    static let maxWriteAgeTicks = 2

    let settings: Settings
    let logger: Logger
    let busAddress: DBusConnection.Bus
    let ring: BLEControlWriteRing

    /// 0 while not ready; else the generation of the current ready connection.
    let readyGeneration = Atomic<Int>(0)
    /// The loop's latest tick number (written by the loop thread).
    let currentTick = Atomic<Int>(0)
    /// Bumped whenever writes were lost: the scheduler then resends everything.
    let resyncRequests = Atomic<Int>(0)
    let droppedWrites = Atomic<Int>(0)
    let sentWrites = Atomic<Int>(0)
    let sentBytes = Atomic<Int>(0)
    /// Bit i: channel i's pulse had to be clamped (set by the loop thread, logged here once).
    let clampedChannels = Atomic<UInt32>(0)
    let rejectedCommands = Atomic<Int>(0)

    private let linkLost = Atomic<Bool>(false)
    private let stopRequested = Atomic<Bool>(false)
    private let senderStop = Atomic<Bool>(false)
    private let senderWake = DispatchSemaphore(value: 0)
    private let senderDone = DispatchSemaphore(value: 0)
    private let supervisorDone = DispatchSemaphore(value: 0)
    private let firstReady = DispatchSemaphore(value: 0)

    private struct Shared {
        var state: BLEControlLinkState = .idle
        var bus: DBusConnection?
        var supervisor: Task<Void, Never>?
        var writer: Writer?
        var lastError: String?
        var fatalError: String?
        var safe: [SafeCommand] = []
        var generation = 0
        var senderRunning = false
        var supervisorRunning = false
    }

    /// Where streaming writes go.
    struct Writer: Sendable {
        var characteristic: BlueZCharacteristic
        var device: BlueZDevice
        var label: String
        /// The `AcquireWrite` socket, or -1 (WriteValue fallback).
        var fd: Int32
        /// The board's replies, subscribed to before its notifications were switched on, so
        /// a reply to the very first value is not lost however late the watcher starts.
        var notes: AsyncStream<[UInt8]>?
    }

    private let shared = Mutex(Shared())

    init(settings: Settings, bus: DBusConnection.Bus, logger: Logger) {
        self.settings = settings
        self.busAddress = bus
        self.logger = logger
        ring = BLEControlWriteRing(slots: 16, slotBytes: max(settings.maxWriteBytes, BLEControlLCDLine.commandBytes))
    }

    var state: BLEControlLinkState { shared.withLock { $0.state } }

    var filterDescription: String { settings.filter.description }

    private func setState(_ state: BLEControlLinkState) {
        let changed = shared.withLock { shared -> Bool in
            defer { shared.state = state }
            return shared.state != state
        }
        if changed { logger.info("blecontrol: \(state)") }
    }

    // MARK: - Start and stop

    /// Connects the bus, starts the sender and the supervisor, and blocks until the first
    /// connection is ready or `settings.connectTimeout` passed.
    func start() throws {
        let bus: DBusConnection
        do { bus = try DBusConnection(bus: busAddress, logger: logger) } catch {
            throw OutputFaultMessage("cannot reach BlueZ over D-Bus: \(error)")
        }
        shared.withLock {
            $0.bus = bus
            $0.senderRunning = true
            $0.supervisorRunning = true
        }
        SystemThread.start(name: "rig-ble-sender") { [self] in
            senderLoop()
            senderDone.signal()
        }
        let task = Task { [self] in
            await supervise(bus: bus)
            supervisorDone.signal()
        }
        shared.withLock { $0.supervisor = task }

        let seconds = Self.seconds(settings.connectTimeout)
        let ready = firstReady.wait(timeout: .now() + seconds) == .success
        let (fatal, last) = shared.withLock { ($0.fatalError, $0.lastError) }
        if ready, fatal == nil { return }
        stop(safe: nil)
        let reason = fatal ?? last.map { "last error: \($0)" } ?? "no board answered"
        throw OutputFaultMessage("no BLEControl board was ready on \(settings.adapter) (\(filterDescription)) within \(formatted(seconds)) s: \(reason)")
    }

    /// Sends `safe` (when connected), disconnects, and stops both workers. Blocks up to a
    /// few seconds. Idempotent.
    func stop(safe: [SafeCommand]?) {
        readyGeneration.store(0, ordering: .releasing)
        let (task, running) = shared.withLock { shared -> (Task<Void, Never>?, Bool) in
            shared.safe = safe ?? []
            defer { shared.supervisor = nil }
            return (shared.supervisor, shared.supervisorRunning)
        }
        stopRequested.store(true, ordering: .releasing)
        task?.cancel()
        if running, supervisorDone.wait(timeout: .now() + 8) == .timedOut {
            logger.error("blecontrol: the link did not shut down within 8 s")
        }
        let senderRunning = shared.withLock { shared -> Bool in
            defer { shared.senderRunning = false }
            return shared.senderRunning
        }
        if senderRunning {
            senderStop.store(true, ordering: .releasing)
            senderWake.signal()
            _ = senderDone.wait(timeout: .now() + 2)
        }
        let bus = shared.withLock { shared -> DBusConnection? in
            defer { shared.bus = nil }
            return shared.bus
        }
        bus?.close()
        setState(.stopped)
    }

    /// Wakes the sender: writes were pushed. Loop thread: no allocation.
    @inline(__always)
    func wakeSender() { senderWake.signal() }

    // MARK: - Supervisor

    private func supervise(bus: DBusConnection) async {
        var attempt = 0
        var everReady = false
        while !stopRequested.load(ordering: .acquiring) {
            do {
                let writer = try await connectOnce(bus: bus)
                attempt = 0
                if !everReady {
                    everReady = true
                    firstReady.signal()
                }
                await runReady(writer)
                readyGeneration.store(0, ordering: .releasing)
                if stopRequested.load(ordering: .acquiring) {
                    // Not cancellable: the safe commands must go out even though we were asked to stop.
                    let safe = shared.withLock { $0.safe }
                    await Task { await self.finish(writer, safe: safe) }.value
                    break
                }
                logger.warning("blecontrol: lost the link to \(writer.label); the timeline keeps running, values resume after reconnecting")
                await release(writer, disconnect: true)
            } catch {
                if stopRequested.load(ordering: .acquiring) { break }
                let message = "\(error)"
                shared.withLock { $0.lastError = message }
                if let fatal = error as? BlueZCentralError, case .noAdapter = fatal {
                    shared.withLock { $0.fatalError = message }
                    if !everReady { firstReady.signal() }
                    logger.error("blecontrol: \(message)")
                    break
                }
                logger.warning("blecontrol: \(message)")
            }
            attempt += 1
            setState(.reconnecting(attempt))
            let delay = min(0.25 * pow(2, Double(min(attempt, 8) - 1)), 5)
            try? await Task.sleep(for: .milliseconds(Int(delay * 1000)))
        }
        shared.withLock { $0.supervisorRunning = false }
    }

    /// Scan, connect, resolve, INIT, enable, acquire: returns the ready writer.
    private func connectOnce(bus: DBusConnection) async throws -> Writer {
        setState(.scanning)
        let central = BlueZCentral(bus: bus)
        let adapter = try await BlueZAdapter.named(settings.adapter, on: bus)
        let found = try await central.discover(
            on: adapter, filter: settings.filter, timeout: settings.connectTimeout,
            preferred: settings.preferredAddress)
        let label = found.label
        setState(.connecting(label))
        let device = BlueZDevice(bus: bus, path: found.path)
        try await device.connect(timeout: settings.connectTimeout)
        setState(.resolving(label))
        let serial = BLEControlProfile.serial
        guard let characteristic = try await device.characteristic(uuid: serial.uuid) else {
            await device.disconnect()
            throw BlueZCentralError.noCharacteristic(device: label, uuid: serial.uuid)
        }
        let missing = serial.missing(in: characteristic.flags)
        guard missing.isEmpty else {
            await device.disconnect()
            throw BlueZCentralError.bluez(
                operation: "checking \(serial.uuid) on \(label)",
                message: "it does not offer \(missing.map(\.rawValue).joined(separator: ", ")): not a \(BLEControlProfile.service.name) board")
        }
        linkLost.store(false, ordering: .releasing)
        setState(.initialising(label))
        // Listen first, then switch the notifications on: a reply the board sends at once
        // (to INIT, to the first value) must not arrive before anyone listens.
        let notes = try? await characteristic.notifications()
        do {
            try await characteristic.startNotify()
        } catch {
            logger.warning("blecontrol: cannot subscribe to \(label)'s replies (\(error)); rejected commands will go unnoticed")
        }
        // INIT alone in its write, then the enables, both acknowledged by the board's module.
        var bytes = 0
        try await characteristic.write(BLEControlCommand.encodeInit(), type: .request)
        bytes += 2
        var pending: [UInt8] = []
        for channel in settings.boardChannels {
            let command = BLEControlCommand.encodeEnable(channel: channel, enabled: true)
            if pending.count + command.count > settings.maxWriteBytes {
                try await characteristic.write(pending, type: .request)
                pending = []
            }
            pending += command
            bytes += command.count
        }
        if !pending.isEmpty { try await characteristic.write(pending, type: .request) }

        var fd: Int32 = -1
        if serial.offers(.writeWithoutResponse, flags: characteristic.flags),
            let acquired = await characteristic.acquireWrite()
        {
            if acquired.mtu - 3 < settings.maxWriteBytes {
                logger.warning(
                    "blecontrol: the link's MTU \(acquired.mtu) carries \(acquired.mtu - 3) bytes per write, less than maxWriteBytes \(settings.maxWriteBytes); using WriteValue"
                )
                close(acquired.fd)
            } else {
                let flags = fcntl(acquired.fd, F_GETFL)
                _ = fcntl(acquired.fd, F_SETFL, flags | O_NONBLOCK)
                fd = acquired.fd
            }
        }
        // Let the bucket pay for the set-up bytes before streaming starts.
        try await Task.sleep(for: .milliseconds(Int((Double(bytes) / settings.linkBytesPerSecond * 1000).rounded(.up))))

        let writer = Writer(characteristic: characteristic, device: device, label: label, fd: fd, notes: notes)
        do { try settings.memory?.save(address: found.address, name: found.name) } catch {
            logger.debug("blecontrol: cannot remember the board: \(error)")
        }
        let generation = shared.withLock { shared -> Int in
            shared.writer = writer
            shared.generation += 1
            return shared.generation
        }
        readyGeneration.store(generation, ordering: .releasing)
        setState(.ready(label))
        logger.info("blecontrol: streaming to \(label) over \(fd >= 0 ? "an AcquireWrite socket" : "WriteValue (command)")")
        return writer
    }

    /// Watches the ready link until it drops or a stop is requested.
    private func runReady(_ writer: Writer) async {
        let changes = try? await writer.device.propertyChanges()
        let notes = writer.notes
        let watchers = [
            Task { [self] in
                guard let changes else { return }
                for await change in changes where change["Connected"]?.bool == false || change["ServicesResolved"]?.bool == false {
                    linkLost.store(true, ordering: .releasing)
                }
            },
            Task { [self] in
                guard let notes else { return }
                for await value in notes { handleNotification(value) }
            },
        ]
        defer { for watcher in watchers { watcher.cancel() } }
        // A disconnect that happened before the subscriptions took effect.
        if let now = try? await writer.device.properties(), now["Connected"]?.bool == false {
            linkLost.store(true, ordering: .releasing)
        }
        var warned: UInt32 = 0
        while !stopRequested.load(ordering: .acquiring), !linkLost.load(ordering: .acquiring), !Task.isCancelled {
            warned = logClampWarnings(warned)
            try? await Task.sleep(for: .milliseconds(50))
        }
        _ = logClampWarnings(warned)
    }

    private func logClampWarnings(_ warned: UInt32) -> UInt32 {
        let bits = clampedChannels.load(ordering: .relaxed)
        let new = bits & ~warned
        guard new != 0 else { return warned }
        for index in settings.axisNames.indices where new & (1 << UInt32(index)) != 0 {
            logger.warning(
                "blecontrol: axis \"\(settings.axisNames[index])\" asked for a pulse outside the board's servo range 1000–2000 µs; clamped. Map its calibration (pulseUs) into 1000–2000 µs"
            )
        }
        return warned | new
    }

    func handleNotification(_ value: [UInt8]) {
        for reply in BLEControlReply.parse(value) {
            switch reply {
            case .unknownCommand:
                rejectedCommands.add(1, ordering: .relaxed)
                logger.warning("blecontrol: \(reply.message)")
            case .unexpected:
                logger.debug("blecontrol: \(reply.message)")
            }
        }
    }

    /// Closes the write socket; optionally disconnects the device.
    private func release(_ writer: Writer, disconnect: Bool) async {
        shared.withLock { $0.writer = nil }
        if writer.fd >= 0 { close(writer.fd) }
        if disconnect { await writer.device.disconnect() }
    }

    /// Shutdown: the safe commands (paced to the budget), then disconnect.
    private func finish(_ writer: Writer, safe: [SafeCommand]) async {
        var writes: [[UInt8]] = []
        var current: [UInt8] = []
        for command in safe {
            let bytes: [UInt8] =
                switch command {
                case .value(let cmd, let channel, let value): BLEControlCommand.encodeValue(command: cmd, channel: channel, value: value)
                case .disable(let channel): BLEControlCommand.encodeEnable(channel: channel, enabled: false)
                }
            if current.count + bytes.count > settings.maxWriteBytes {
                writes.append(current)
                current = []
            }
            current += bytes
        }
        if !current.isEmpty { writes.append(current) }
        // Let whatever streamed last drain from the bucket first.
        try? await Task.sleep(for: .milliseconds(Int(Double(settings.maxWriteBytes) / settings.linkBytesPerSecond * 1000) + 1))
        for write in writes {
            var sent = false
            if writer.fd >= 0 {
                for _ in 0..<20 {
                    let result = write.withUnsafeBytes { Glibc.write(writer.fd, $0.baseAddress, $0.count) }
                    if result == write.count {
                        sent = true
                        break
                    }
                    guard result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS else { break }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            if !sent {
                do {
                    try await writer.characteristic.write(write, type: .request, timeout: .seconds(2))
                    sent = true
                } catch {
                    logger.error("blecontrol: could not send the safe state to \(writer.label): \(error)")
                }
            }
            if sent {
                sentWrites.add(1, ordering: .relaxed)
                sentBytes.add(write.count, ordering: .relaxed)
            }
            try? await Task.sleep(for: .milliseconds(Int(Double(write.count) / settings.linkBytesPerSecond * 1000) + 1))
        }
        await writer.characteristic.stopNotify()
        await release(writer, disconnect: true)
    }

    // MARK: - Sender thread

    private func senderLoop() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ring.slotBytes, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            senderWake.wait()
            if senderStop.load(ordering: .acquiring) { break }
            while let stamp = ring.pop(into: buffer) {
                let generation = readyGeneration.load(ordering: .acquiring)
                let age = currentTick.load(ordering: .relaxed) - stamp.tick
                guard stamp.generation == generation, age <= Self.maxWriteAgeTicks else {
                    droppedWrites.add(1, ordering: .relaxed)
                    if stamp.generation == generation { resyncRequests.add(1, ordering: .releasing) }
                    continue
                }
                send(UnsafeRawBufferPointer(rebasing: buffer[0..<stamp.length]))
            }
        }
    }

    private func send(_ bytes: UnsafeRawBufferPointer) {
        guard let writer = shared.withLock({ $0.writer }) else {
            droppedWrites.add(1, ordering: .relaxed)
            return
        }
        if writer.fd >= 0 {
            let result = Syscall.call { Glibc.write(writer.fd, bytes.baseAddress, bytes.count) }
            if case .success(bytes.count) = result {
                sentWrites.add(1, ordering: .relaxed)
                sentBytes.add(bytes.count, ordering: .relaxed)
                return
            }
            droppedWrites.add(1, ordering: .relaxed)
            resyncRequests.add(1, ordering: .releasing)
            if case .failure(let error) = result, error != .resourceTemporarilyUnavailable, error != .wouldBlock, error != .noBufferSpace {
                // EPIPE, ECONNRESET, ENOTCONN: the socket is gone with the link.
                linkLost.store(true, ordering: .releasing)
            }
            return
        }
        let payload = Array(bytes)
        let outcome = Self.blocking { try await writer.characteristic.write(payload, type: .command, timeout: .seconds(1)) }
        if outcome {
            sentWrites.add(1, ordering: .relaxed)
            sentBytes.add(payload.count, ordering: .relaxed)
        } else {
            droppedWrites.add(1, ordering: .relaxed)
            resyncRequests.add(1, ordering: .releasing)
        }
    }

    /// Runs `body` to completion from a plain thread (the sender); true on success.
    private static func blocking(_ body: @escaping @Sendable () async throws -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex(false)
        Task {
            do {
                try await body()
                result.withLock { $0 = true }
            } catch {}
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func formatted(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? format(seconds) : fixed(seconds, 1)
    }
}

/// A start failure with a message for the user.
struct OutputFaultMessage: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

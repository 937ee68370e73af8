import RigCore
import SystemPackage

/// Reads one open evdev gamepad: decodes its records into packets, resyncs after
/// SYN_DROPPED, and publishes each complete packet to a `GamepadInput`. Used by one
/// thread at a time; `readAvailable` reads what is there without blocking and never
/// allocates. The fd may be anything readable (tests use a pipe); the ioctls go
/// through `EvdevControl`.
public final class GamepadReader {
    public let path: String
    public let fd: FileDescriptor
    public let name: String
    public private(set) var decoder = EvdevDecoder()
    public private(set) var interpreter: GamepadInterpreter
    public let absPresent: EvdevBitmap
    public let keysPresent: EvdevBitmap
    private let control: any EvdevControl
    private let input: GamepadInput
    /// This reader's own view; `publish` adds its changes to the shared input.
    private var snapshot = GamepadSnapshot()
    private var published = GamepadSnapshot()
    private let buffer: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var keyScratch = EvdevBitmap(byteCount: EvdevCode.keyBitmapBytes)
    private var closed = false
    /// Resyncs done after SYN_DROPPED (for logs and tests).
    public private(set) var resyncCount = 0

    /// How a read ended.
    public enum ReadResult: Sendable, Equatable {
        /// Nothing more to read now (EAGAIN).
        case idle
        /// The device is gone: end of file, or ENODEV.
        case deviceGone(String)
    }

    /// Reads the device's capabilities and ranges and its current state, and publishes
    /// it as connected. Throws if the ioctls fail (not an evdev device, or gone).
    public init(path: String, fd: FileDescriptor, control: any EvdevControl, config: JogConfig, input: GamepadInput) throws(Errno) {
        self.path = path
        self.fd = fd
        self.control = control
        self.input = input
        name = (try? control.name(fd)) ?? path
        var keys = EvdevBitmap(byteCount: EvdevCode.keyBitmapBytes)
        var abs = EvdevBitmap(byteCount: EvdevCode.absBitmapBytes)
        try control.eventBits(fd, type: EvdevCode.key, into: &keys)
        try control.eventBits(fd, type: EvdevCode.absolute, into: &abs)
        keysPresent = keys
        absPresent = abs
        let layout = config.sdlMapping.map { GamepadLayout.sdl($0, keys: keys, abs: abs) } ?? GamepadLayout.standard(keys: keys)
        interpreter = GamepadInterpreter(layout: layout, config: config)
        for code in layout.absCodes where abs.contains(Int(code)) {
            interpreter.setRange(try control.absInfo(fd, axis: code), axis: code)
        }
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * InputEvent.byteCount, alignment: 8)
        try readState()
        interpreter.adopt(decoder.state, into: &snapshot)
        snapshot.gamepadConnected = true
        snapshot.stickFlat = interpreter.stickFlatFraction
        snapshot.generation &+= 1
        snapshot.signsOfLife &+= 1
        publish()
    }

    deinit {
        buffer.deallocate()
    }

    /// Reads every record available now; publishes each complete packet.
    public func readAvailable() -> ReadResult {
        while true {
            let count: Int
            do {
                count = try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[buffered...]), retryOnInterrupt: true)
            } catch let error as Errno {
                if error == .wouldBlock || error == .resourceTemporarilyUnavailable { return .idle }
                return gone(error == .operationNotSupportedByDevice ? "unplugged (ENODEV)" : "read failed: \(error)")
            } catch {
                return gone("read failed: \(error)")
            }
            if count == 0 { return gone("end of file") }
            buffered += count
            let whole = buffered / InputEvent.byteCount * InputEvent.byteCount
            var offset = 0
            while offset < whole {
                let event = InputEvent(bytes: UnsafeRawBufferPointer(buffer), offset: offset)
                offset += InputEvent.byteCount
                switch decoder.feed(event) {
                case .none:
                    break
                case .packet:
                    interpreter.apply(decoder.state, to: &snapshot)
                    snapshot.signsOfLife &+= 1
                    publish()
                case .resyncNeeded:
                    do {
                        try readState()
                    } catch {
                        return gone("resync failed: \(error)")
                    }
                    resyncCount += 1
                    interpreter.apply(decoder.state, to: &snapshot)
                    snapshot.signsOfLife &+= 1
                    publish()
                }
            }
            // A pipe may split a record; the kernel never does.
            let rest = buffered - whole
            if rest > 0, let base = buffer.baseAddress { base.copyMemory(from: base + whole, byteCount: rest) }
            buffered = rest
        }
    }

    /// Checks that the device still answers (EVIOCGABS on a stick) when it has been
    /// quiet: a stick held still sends nothing, and that is not a fault. Counts as a sign
    /// of life; false if the device is gone.
    public func probe() -> Bool {
        let code: UInt16 = interpreter.layout.absCodes.first { absPresent.contains(Int($0)) } ?? 0
        do {
            if absPresent.contains(Int(code)) {
                _ = try control.absInfo(fd, axis: code)
            } else {
                try control.keyState(fd, into: &keyScratch)
            }
        } catch {
            return false
        }
        snapshot.signsOfLife &+= 1
        publish()
        return true
    }

    /// Closes the device and publishes it as disconnected.
    public func close() {
        guard !closed else { return }
        closed = true
        try? fd.close()
        snapshot.gamepadConnected = false
        snapshot.sticks = .zero
        publish()
    }

    private func gone(_ why: String) -> ReadResult {
        snapshot.gamepadConnected = false
        snapshot.sticks = .zero
        publish()
        return .deviceGone(why)
    }

    /// Adds what changed since the last publish to the shared input (sticks and the
    /// connection are this reader's; counters are added, so the keyboard's survive).
    @inline(__always)
    private func publish() {
        let local = snapshot
        let previous = published
        input.update { s in
            s.sticks = local.sticks
            s.actions &+= local.actions &- previous.actions
            s.buttonPresses &+= local.buttonPresses &- previous.buttonPresses
            s.nudges &+= local.nudges &- previous.nudges
            s.signsOfLife &+= local.signsOfLife &- previous.signsOfLife
            s.generation &+= local.generation &- previous.generation
            s.gamepadConnected = local.gamepadConnected
            s.stickFlat = local.stickFlat
        }
        published = local
    }

    /// EVIOCGKEY and EVIOCGABS into the decoder's state.
    private func readState() throws(Errno) {
        try control.keyState(fd, into: &keyScratch)
        var values: [(UInt16, Int32)] = []
        for code in interpreter.layout.absCodes where absPresent.contains(Int(code)) {
            values.append((code, try control.absInfo(fd, axis: code).value))
        }
        let keys = keyScratch
        decoder.resync { state in
            state.setKeys(keys)
            for (code, value) in values { state.setAbs(code, value) }
        }
    }
}

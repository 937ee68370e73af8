import Synchronization

@testable import RigPCA9685

/// A fake `/dev/i2c-N` behind the syscall funnel: records every call, keeps a plain
/// register file (auto-increment always on), and fails calls on demand with `-errno`.
final class FakeI2CDevice: Sendable {
    struct State {
        var calls: [String] = []
        var openFlags: CInt?
        var openPath: String?
        var registers = [UInt8](repeating: 0, count: 256)
        /// Results to return instead of doing the call, per call name ("open", "ioctl",
        /// "block", "readByteData", …), consumed in order.
        var failures: [String: [CInt]] = [:]
        /// If set, probes of other addresses fail with -ENXIO (no ACK).
        var present: Set<Int>?
        var selected = -1
    }

    static let fd: CInt = 7
    let state = Mutex(State())

    init() {
        state.withLock {
            $0.registers[0x00] = 0x11  // MODE1 at power-on
            $0.registers[0xFE] = 0x1E  // PRE_SCALE at power-on
        }
    }

    func fail(_ call: String, with results: [CInt]) {
        state.withLock { $0.failures[call, default: []].append(contentsOf: results) }
    }

    var calls: [String] { state.withLock { $0.calls } }

    private func record(_ name: String, _ call: String) -> CInt? {
        state.withLock { state in
            state.calls.append(call)
            if var queue = state.failures[name], !queue.isEmpty {
                let result = queue.removeFirst()
                state.failures[name] = queue
                return result
            }
            return nil
        }
    }

    private func probeResult() -> CInt {
        state.withLock { state in
            guard let present = state.present else { return 0 }
            return present.contains(state.selected) ? 0 : -6 /* ENXIO */
        }
    }

    var syscalls: I2CSyscalls {
        I2CSyscalls(
            open: { path, flags in
                self.state.withLock {
                    $0.openFlags = flags
                    $0.openPath = path
                }
                return self.record("open", "open \(path)") ?? Self.fd
            },
            close: { fd in self.record("close", "close \(fd)") ?? 0 },
            ioctl: { fd, request, argument in
                if let result = self.record("ioctl", "ioctl \(fd) 0x\(String(request, radix: 16)) 0x\(String(argument, radix: 16))") {
                    return result
                }
                self.state.withLock { $0.selected = Int(argument) }
                return 0
            },
            smbusWriteQuick: { fd in self.record("quick", "quick") ?? self.probeResult() },
            smbusReadByte: { fd in self.record("readByte", "readByte") ?? self.probeResult() },
            smbusReadByteData: { fd, command in
                if let result = self.record("readByteData", "readByteData 0x\(String(command, radix: 16))") { return result }
                return CInt(self.state.withLock { $0.registers[Int(command)] })
            },
            smbusWriteByteData: { fd, command, value in
                if let result = self.record("writeByteData", "writeByteData 0x\(String(command, radix: 16)) 0x\(String(value, radix: 16))") { return result }
                self.state.withLock { $0.registers[Int(command)] = value }
                return 0
            },
            smbusWriteI2CBlockData: { fd, command, data in
                if let result = self.record("block", "block 0x\(String(command, radix: 16)) \(data.count)") { return result }
                let bytes = Array(data)
                self.state.withLock { state in
                    for (offset, byte) in bytes.enumerated() { state.registers[(Int(command) + offset) & 0xFF] = byte }
                }
                return 0
            },
            smbusReadI2CBlockData: { fd, command, into in
                if let result = self.record("readBlock", "readBlock 0x\(String(command, radix: 16)) \(into.count)") { return result }
                let registers = self.state.withLock { $0.registers }
                for offset in 0..<into.count { into[offset] = registers[(Int(command) + offset) & 0xFF] }
                return CInt(into.count)
            }
        )
    }
}

import CLinux
import RigGamepad
import Synchronization
import SystemPackage

/// Answers the evdev ioctls like a standard Linux gamepad would, from state the test sets.
final class FakeEvdevControl: EvdevControl {
    struct Device {
        var name = "Fake Gamepad"
        var keys: [Int] = [BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_SELECT, BTN_START, BTN_MODE, BTN_THUMBL, BTN_THUMBR].map(Int.init)
        var absInfo: [UInt16: AbsInfo] = [
            UInt16(ABS_X): AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            UInt16(ABS_Y): AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            UInt16(ABS_RX): AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            UInt16(ABS_RY): AbsInfo(minimum: -32768, maximum: 32767, fuzz: 16, flat: 128),
            UInt16(ABS_HAT0X): AbsInfo(minimum: -1, maximum: 1),
            UInt16(ABS_HAT0Y): AbsInfo(minimum: -1, maximum: 1),
        ]
        var keysDown: Set<Int> = []
        var gone = false
    }

    let device: Mutex<Device>

    init(_ device: Device = Device()) {
        self.device = Mutex(device)
    }

    /// What EVIOCGABS/EVIOCGKEY will report from now on.
    func set(_ body: (inout Device) -> Void) {
        device.withLock { body(&$0) }
    }

    func absInfo(_ fd: FileDescriptor, axis: UInt16) throws(Errno) -> AbsInfo {
        let d = device.withLock { $0 }
        if d.gone { throw Errno.operationNotSupportedByDevice }
        guard let info = d.absInfo[axis] else { throw Errno.invalidArgument }
        return info
    }

    func keyState(_ fd: FileDescriptor, into bitmap: inout EvdevBitmap) throws(Errno) {
        let d = device.withLock { $0 }
        if d.gone { throw Errno.operationNotSupportedByDevice }
        bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: Array(d.keysDown))
    }

    func eventBits(_ fd: FileDescriptor, type: UInt16, into bitmap: inout EvdevBitmap) throws(Errno) {
        let d = device.withLock { $0 }
        if d.gone { throw Errno.operationNotSupportedByDevice }
        switch Int32(type) {
        case 0: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: [Int(EV_SYN), Int(EV_KEY), Int(EV_ABS)])
        case EV_KEY: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: d.keys)
        case EV_ABS: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: d.absInfo.keys.map(Int.init))
        default: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count)
        }
    }

    func name(_ fd: FileDescriptor) throws(Errno) -> String {
        device.withLock { $0.name }
    }
}

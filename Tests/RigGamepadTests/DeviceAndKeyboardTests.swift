import CLinux
import Foundation
import RigCore
import RigGamepad
import SystemPackage
import Testing

/// Answers EVIOCGBIT by the node's name: files named "*pad*" are gamepads, others are
/// keyboards (keys, no axes).
struct NamedFakeControl: EvdevControl {
    func path(_ fd: FileDescriptor) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd.rawValue)")) ?? ""
    }
    func absInfo(_ fd: FileDescriptor, axis: UInt16) throws(Errno) -> AbsInfo { AbsInfo(minimum: -1, maximum: 1) }
    func keyState(_ fd: FileDescriptor, into bitmap: inout EvdevBitmap) throws(Errno) { bitmap.clear() }
    func eventBits(_ fd: FileDescriptor, type: UInt16, into bitmap: inout EvdevBitmap) throws(Errno) {
        let pad = (path(fd) as NSString).lastPathComponent.contains("pad")
        switch Int32(type) {
        case EV_KEY: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: pad ? [Int(BTN_SOUTH)] : [Int(KEY_A)])
        case EV_ABS: bitmap = EvdevBitmap(byteCount: bitmap.bytes.count, codes: pad ? [Int(ABS_X)] : [])
        default: bitmap.clear()
        }
    }
    func name(_ fd: FileDescriptor) throws(Errno) -> String { path(fd) }
}

@Suite("finding a gamepad, and the keyboard fallback")
struct DeviceAndKeyboardTests {
    @Test func findsAGamepadByCapabilityPreferringByID() throws {
        let dir = NSTemporaryDirectory() + "rig-input-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/by-id", withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: dir) }
        for name in ["event0-keyboard", "event2-pad", "event10-pad"] { _ = fm.createFile(atPath: dir + "/" + name, contents: Data()) }
        // Named like the kernel's nodes: eventN (the fake decides by the link target's name).
        try fm.createSymbolicLink(atPath: dir + "/event0", withDestinationPath: dir + "/event0-keyboard")
        try fm.createSymbolicLink(atPath: dir + "/event2", withDestinationPath: dir + "/event2-pad")
        try fm.createSymbolicLink(atPath: dir + "/event10", withDestinationPath: dir + "/event10-pad")
        let finder = GamepadFinder(directory: dir, control: NamedFakeControl())
        #expect(finder.candidates().map { ($0 as NSString).lastPathComponent } == ["event0", "event2", "event10"])
        var found = finder.find().found
        #expect(found.map { ($0.path as NSString).lastPathComponent } == "event2")
        try? found?.fd.close()

        try fm.createSymbolicLink(atPath: dir + "/by-id/usb-Pad-event-joystick", withDestinationPath: "../event10")
        #expect(finder.candidates().first.map { ($0 as NSString).lastPathComponent } == "usb-Pad-event-joystick")
        #expect(finder.candidates().count == 3, "the by-id link and its target are one device")
        found = finder.find().found
        #expect(found.map { ($0.path as NSString).lastPathComponent } == "usb-Pad-event-joystick")
        try? found?.fd.close()

        let only = GamepadFinder(directory: dir, control: NamedFakeControl(), device: dir + "/event0")
        let result = only.find()
        #expect(result.found == nil)
        #expect(result.problems.first?.contains("not a gamepad") == true)
    }

    @Test func keysDecodeIncludingSplitEscapeSequences() {
        var decoder = KeyDecoder()
        var keys: [KeyDecoder.Key] = []
        for byte in Array("\u{1B}[A\u{1B}[D +-q".utf8) + [0x1B, UInt8(ascii: "O"), UInt8(ascii: "C")] {
            if let key = decoder.feed(byte) { keys.append(key) }
        }
        #expect(keys == [.arrow(2), .arrow(0), .action(.record), .action(.faster), .action(.slower), .action(.quit), .arrow(1)])
    }

    @Test func keyboardArrowsMoveAndKeysAct() throws {
        let h = try JogHarness()
        h.keepAlive = false
        h.input.update { s in
            s.keyboardActive = true
            s.pulses[1] &+= 1  // right arrow
            s.signsOfLife &+= 1
        }
        h.run(ticks: 30)
        #expect(h.velocities[0] > 0)
        h.run(ticks: 200)
        #expect(h.velocities[0] == 0, "a single press moves for a moment, then stops")
        #expect(h.frame[0] > 0)
        h.input.update { s in
            s.press(.record)
            s.signsOfLife &+= 1
        }
        h.run(ticks: 1)
        #expect(h.drainNotices().contains { if case .record = $0 { true } else { false } })
        #expect(h.violations.isEmpty)
    }
}

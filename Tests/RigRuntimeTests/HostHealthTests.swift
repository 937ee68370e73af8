import Foundation
import Glibc
import Testing

@testable import RigRuntime

@Suite struct HostHealthTests {
    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("throttled-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The firmware's bits, as the sysfs file and vcgencmd write them.
    @Test func thePiFlagsAreReadAndSaidInWords() throws {
        let now = try file("50005\n")
        defer { unlink(now) }
        let flags = try #require(PiPowerFlags.read(path: now))
        #expect(flags.underVoltageNow && flags.throttledNow && flags.underVoltageSinceBoot)
        #expect(flags.problems == ["under-voltage now", "throttled now"])
        let past = try file("throttled=0x50000")
        defer { unlink(past) }
        #expect(PiPowerFlags.read(path: past)?.problems == ["under-voltage since boot", "throttled since boot"])
        let clean = try file("0x0")
        defer { unlink(clean) }
        #expect(PiPowerFlags.read(path: clean)?.problems == [])
        let garbage = try file("not hex")
        defer { unlink(garbage) }
        #expect(PiPowerFlags.read(path: garbage) == nil)
        #expect(PiPowerFlags.read(path: "/nonexistent/get_throttled") == nil)
    }

    /// Owner, group and other bits decide, for an account that is not the one running.
    @Test func aNodeIsOpenToItsOwnerItsGroupOrEveryoneByItsBits() throws {
        let path = try file("")
        defer { unlink(path) }
        #expect(chmod(path, 0o660) == 0)
        let node = try #require(DeviceAccess.of(path))
        #expect(node.mode == 0o660)
        let owner = DeviceAccess.Account(name: "owner", uid: node.ownerUID == 0 ? 4242 : node.ownerUID, gids: [])
        let member = DeviceAccess.Account(name: "member", uid: 4243, gids: [node.groupGID])
        let stranger = DeviceAccess.Account(name: "stranger", uid: 4244, gids: [node.groupGID &+ 1])
        let root = DeviceAccess.Account(name: "root", uid: 0, gids: [])
        if node.ownerUID != 0 { #expect(node.allowsReadWrite(for: owner)) }
        #expect(node.allowsReadWrite(for: member))
        #expect(!node.allowsReadWrite(for: stranger))
        #expect(node.allowsReadWrite(for: root))
        #expect(chmod(path, 0o664) == 0)
        #expect(DeviceAccess.of(path)?.allowsReadWrite(for: stranger) == false, "read-only for others")
        #expect(chmod(path, 0o666) == 0)
        #expect(DeviceAccess.of(path)?.allowsReadWrite(for: stranger) == true)
    }

    @Test func aLibgphoto2USBPortNamesItsNode() {
        #expect(DeviceAccess.usbNode(port: "usb:001,004") == "/dev/bus/usb/001/004")
        #expect(DeviceAccess.usbNode(port: "usb:") == nil)
        #expect(DeviceAccess.usbNode(port: "ptpip:192.168.1.1") == nil)
        #expect(DeviceAccess.usbNode(port: "usb:0,4") == nil)
    }

    @Test func theServiceUsersGroupsComeFromTheUserDatabase() throws {
        let root = try #require(DeviceAccess.Account.named("root"))
        #expect(root.uid == 0 && root.gids.contains(0))
        #expect(DeviceAccess.Account.named("no-such-user-\(getpid())") == nil)
    }
}

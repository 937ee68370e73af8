import Foundation
import RigTestSupport
import Testing

@testable import RigDBus

/// Round trips through real libdbus messages: append to a fresh method call, read back.
@Suite struct MarshallingTests {
    func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
        let message = try DBusMessageHandle.methodCall(
            destination: "org.rig.Test", path: "/org/rig/test",
            interface: "org.rig.Test", method: "Echo")
        try message.append(values)
        #expect(message.signature == values.dbusSignature)
        return try message.read(expecting: values.dbusSignature)
    }

    @Test func basicTypes() throws {
        let values: [DBusValue] = [
            .byte(0xFE), .boolean(true), .boolean(false), .int16(-12345), .uint16(54321), .int32(-7), .uint32(.max),
            .int64(.min), .uint64(.max), .double(-0.125), .string(""), .string("Grüße ✓"),
            .objectPath("/org/bluez/hci0/dev_00_11"), .objectPath("/"), .signature("a{oa{sa{sv}}}"), .signature(""),
        ]
        #expect(try roundTrip(values) == values)
    }

    @Test func arraysIncludingEmptyOnes() throws {
        let values: [DBusValue] = [
            .bytes([0, 1, 2, 255]), .bytes([]),
            .strings(["a", "b"]), .strings([]),
            .objectPaths(["/a", "/b/c"]), .objectPaths([]),
            .array(element: "(is)", [.structure([.int32(1), .string("x")])]),
            .array(element: "a{sv}", []),
            .array(element: "aay", [.array(element: "ay", [.bytes([1]), .bytes([])])]),
        ]
        let back = try roundTrip(values)
        #expect(back == values)
        #expect(back[3].signature == "as")
        #expect(back[5].signature == "ao")
    }

    @Test func byteArraysWrittenAsGenericArraysReadBackAsBytes() throws {
        let back = try roundTrip([.array(element: "y", [.byte(1), .byte(2)])])
        #expect(back == [.bytes([1, 2])])
    }

    @Test func nestedDictionariesAndVariants() throws {
        let inner = DBusValue.vardict(["Flags": .strings(["read", "notify"]), "Value": .bytes([1]), "MTU": .uint16(23)])
        let options = DBusValue.vardict(["nested": inner, "empty": .vardict([:]), "deep": .variant(.variant(.int32(3)))])
        let managed = DBusValue.dictionary(
            key: "o", value: "a{sa{sv}}",
            [
                DBusDictEntry(
                    .objectPath("/org/bluez/hci0"),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        [
                            DBusDictEntry(.string("org.bluez.Adapter1"), .vardict(["Address": .string("00:00:00:11:11:11"), "Powered": .boolean(true)]))
                        ]))
            ])
        let values: [DBusValue] = [
            options, managed, .dictionary(key: "u", value: "as", []),
            .dictionary(key: "y", value: "(bd)", [DBusDictEntry(.byte(1), .structure([.boolean(true), .double(2)]))]),
        ]
        let back = try roundTrip(values)
        #expect(back == values)
        #expect(back[0].vardict?["nested"]?.vardict?["Flags"]?.strings == ["read", "notify"])
        #expect(back[0].vardict?["deep"] == .int32(3))
        let decoded = try DBusManagedObjects(reply: [back[1]])
        #expect(decoded.objects["/org/bluez/hci0"]?["org.bluez.Adapter1"]?["Powered"] == .boolean(true))
    }

    @Test func structsAndVariantsOfContainers() throws {
        let values: [DBusValue] = [
            .structure([.string("s"), .structure([.uint64(1), .bytes([9])]), .strings([])]),
            .variant(.strings(["x"])), .variant(.vardict(["k": .objectPath("/p")])), .variant(.bytes([])),
        ]
        #expect(try roundTrip(values) == values)
    }

    @Test func unixFileDescriptorsAreDuplicated() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let back = try roundTrip([.unixFD(DBusUnixFD(fds[1])), .string("after")])
        guard let received = back.first?.unixFD else {
            Issue.record("no fd in \(back)")
            return
        }
        defer { close(received.rawValue) }
        #expect(received.rawValue != fds[1])
        #expect(back[1] == .string("after"))
        var byte: UInt8 = 42
        #expect(write(received.rawValue, &byte, 1) == 1)
        var readBack: UInt8 = 0
        #expect(read(fds[0], &readBack, 1) == 1)
        #expect(readBack == 42)
    }

    @Test func invalidInputIsRejectedWithoutACrash() throws {
        let message = try DBusMessageHandle.methodCall(destination: nil, path: "/t", interface: nil, method: "M")
        #expect(throws: DBusMarshalError.invalidString("a\u{0}b")) { try message.append([.string("a\u{0}b")]) }
        #expect(throws: DBusMarshalError.invalidObjectPath("relative")) { try message.append([.objectPath("relative")]) }
        #expect(throws: DBusMarshalError.invalidObjectPath("/a//b")) { try message.append([.variant(.objectPath("/a//b"))]) }
        #expect(throws: DBusMarshalError.invalidObjectPath("/trailing/")) { try message.append([.objectPaths(["/ok", "/trailing/"])]) }
        #expect(throws: DBusMarshalError.invalidSignature("a{")) { try message.append([.signature("a{")]) }
        #expect(throws: DBusMarshalError.signatureMismatch(expected: "s", actual: "i")) {
            try message.append([.array(element: "s", [.string("ok"), .int32(1)])])
        }
        #expect(throws: DBusMarshalError.signatureMismatch(expected: "v", actual: "s")) {
            try message.append([.dictionary(key: "s", value: "v", [DBusDictEntry(.string("k"), .string("not a variant"))])])
        }
        #expect(throws: DBusMarshalError.self) { try message.append([.structure([])]) }
        #expect(throws: DBusMarshalError.self) { try message.append([.dictionary(key: "as", value: "s", [])]) }
        #expect(throws: DBusMarshalError.self) { try message.append([.array(element: "ss", [])]) }
        #expect(throws: DBusMarshalError.self) { try message.append([.unixFD(DBusUnixFD(-1))]) }
        // Nothing was appended by the rejected calls.
        #expect(message.signature == "")
        try message.append([.string("still usable")])
        #expect(try message.read() == [.string("still usable")])
    }

    @Test func invalidUTF8IsDetected() {
        #expect(DBusSyntax.isValidUTF8(Array("héllo".utf8)))
        #expect(!DBusSyntax.isValidUTF8([0x68, 0xFF, 0xFE]))
        #expect(!DBusSyntax.isValidUTF8([0xC3]))
        #expect(!DBusSyntax.isValidUTF8([0xED, 0xA0, 0x80]))  // a UTF-16 surrogate
    }

    @Test func invalidNamesAreRejected() {
        #expect(throws: DBusMarshalError.invalidObjectPath("no/slash")) {
            try DBusMessageHandle.methodCall(destination: nil, path: "no/slash", interface: nil, method: "M")
        }
        #expect(throws: DBusMarshalError.invalidName(kind: "interface", name: "nodots")) {
            try DBusMessageHandle.methodCall(destination: nil, path: "/", interface: "nodots", method: "M")
        }
        #expect(throws: DBusMarshalError.invalidName(kind: "member", name: "bad.member")) {
            try DBusMessageHandle.signal(path: "/", interface: "org.rig.X", member: "bad.member")
        }
        #expect(throws: DBusMarshalError.invalidName(kind: "bus", name: "1bad")) {
            try DBusMessageHandle.methodCall(destination: "1bad", path: "/", interface: nil, method: "M")
        }
    }

    @Test func invalidErrorNameBecomesFailed() throws {
        let call = try DBusMessageHandle.methodCall(destination: nil, path: "/t", interface: nil, method: "M")
        #expect(throws: DBusMarshalError.self) { try call.errorReply(DBusError(DBusError.failed)) }
        call.setSerial(7)
        let reply = try call.errorReply(DBusError("not an error name", "why\u{0}"))
        #expect(reply.errorName == DBusError.failed)
        let good = try call.errorReply(DBusError("org.bluez.Error.NotPermitted", "no"))
        #expect(good.errorName == "org.bluez.Error.NotPermitted")
        #expect(try good.read() == [.string("no")])
    }

    @Test func readingWithTheWrongSignatureIsATypedError() throws {
        let message = try DBusMessageHandle.methodCall(destination: nil, path: "/t", interface: nil, method: "M")
        try message.append([.int32(1), .vardict(["a": .byte(1)])])
        #expect(throws: DBusMarshalError.signatureMismatch(expected: "s", actual: "ia{sv}")) {
            try message.read(expecting: "s")
        }
        #expect(throws: DBusMarshalError.signatureMismatch(expected: "oa{sa{sv}}", actual: "ia{sv}")) {
            try DBusInterfacesAdded(DBusSignal(sender: nil, path: "/", interface: "i.f", member: "m", args: try message.read()))
        }
        #expect(throws: DBusMarshalError.self) { try DBusManagedObjects(reply: []) }
    }

    @Test func signatureSplitting() {
        #expect(DBusSignature.completeTypes("sa{sv}as(ii)v") == ["s", "a{sv}", "as", "(ii)", "v"])
        #expect(DBusSignature.completeTypes("") == [])
        #expect(DBusSignature.completeTypes("a") == nil)
        #expect(DBusSignature.completeTypes("()") == nil)
        #expect(DBusSignature.keyAndValue("oa{sa{sv}}")! == ("o", "a{sa{sv}}"))
    }

    @Test func matchRuleStrings() {
        let rule = DBusMatchRule.propertiesChanged(
            sender: "org.bluez", pathNamespace: "/org/bluez",
            interface: "org.bluez.Device1")
        #expect(
            rule.matchString == "type='signal',sender='org.bluez',path_namespace='/org/bluez',"
                + "interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='org.bluez.Device1'")
        #expect(DBusMatchRule(arg0: "it's").matchString == "type='signal',arg0='it'\\''s'")
    }
}

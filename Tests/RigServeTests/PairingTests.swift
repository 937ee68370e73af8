import Foundation
import RigTestSupport
import Testing

@testable import RigServe

@Suite struct PairingCodeTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func book() throws -> PairingBook {
        PairingBook(directory: try TestTools.temporaryDirectory().appendingPathComponent("state").path)
    }

    @Test func aCodeIsShortUnambiguousAndRandom() throws {
        let book = try book()
        let codes = try (0..<50).map { _ in try book.issueCode(now: t0) }
        #expect(Set(codes).count == 50)
        for code in codes {
            #expect(code.count == 8)
            #expect(code.allSatisfy { "23456789ABCDEFGHJKMNPQRSTUVWXYZ".contains($0) })
        }
        #expect(PairingBook.shown("ABCDEFGH") == "ABCD-EFGH")
        #expect(PairingBook.normalized(" abcd-efgh ") == "ABCDEFGH")
        #expect(PairingBook.normalized("ABCD-EFG0") == nil)
        #expect(PairingBook.normalized("ABCDEFG") == nil)
    }

    @Test func aCodeWorksOnceAndTypedAnyWay() throws {
        let book = try book()
        let code = try book.issueCode(now: t0)
        let typed = PairingBook.shown(code).lowercased()
        let paired = try #require(try book.redeem(code: typed, name: "Android Chrome", now: t0.addingTimeInterval(5)))
        #expect(paired.secret.count == 64 && paired.secret.allSatisfy(\.isHexDigit))
        #expect(paired.phone.name == "Android Chrome" && paired.phone.id.count == 8)
        // Single use: the same code again, even at once, pairs nothing.
        #expect(try book.redeem(code: code, name: "x", now: t0.addingTimeInterval(6)) == nil)
        #expect(try book.phones().count == 1)
    }

    @Test func aCodeExpiresAfterTenMinutes() throws {
        let book = try book()
        let code = try book.issueCode(now: t0)
        #expect(try book.redeem(code: code, name: "late", now: t0.addingTimeInterval(PairingBook.codeLifetime + 1)) == nil)
        let second = try book.issueCode(now: t0)
        #expect(try book.redeem(code: second, name: "in time", now: t0.addingTimeInterval(PairingBook.codeLifetime - 1)) != nil)
        // The expired one is gone from the file.
        #expect(try book.read().codes.isEmpty)
    }

    @Test func wrongCodesLockEveryoneOutForAMinute() {
        let gate = PairingGate()
        for i in 0..<5 {
            #expect(gate.retryAfter(nowSeconds: 100 + Double(i)) == nil)
            gate.failed(nowSeconds: 100 + Double(i))
        }
        let wait = gate.retryAfter(nowSeconds: 105)
        #expect(wait != nil && abs(wait! - 55) < 0.001)
        #expect(gate.retryAfter(nowSeconds: 159.9) != nil)
        // A minute after the first failure one more try is taken.
        #expect(gate.retryAfter(nowSeconds: 160) == nil)
    }

    @Test func theComparisonIsRightWhereverItDiffers() {
        let a = String(repeating: "a", count: 64)
        #expect(Secret.equal(a, a))
        #expect(!Secret.equal(a, String(a.dropLast())))
        #expect(!Secret.equal(a, a + "a"))
        #expect(!Secret.equal(a, "b" + a.dropFirst()))
        #expect(!Secret.equal(a, a.dropLast() + "b"))
        #expect(!Secret.equal("", a) && Secret.equal("", ""))
    }
}

@Suite struct PairedPhonesFileTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func pairedPhonesSurviveANewReaderAndTheSecretIsKeptAsAHashOnly() throws {
        let directory = try TestTools.temporaryDirectory().appendingPathComponent("state").path
        let book = PairingBook(directory: directory)
        let paired = try #require(try book.redeem(code: try book.issueCode(now: t0), name: "iPhone Safari", now: t0))
        let text = try String(contentsOfFile: book.path, encoding: .utf8)
        #expect(!text.contains(paired.secret))
        #expect(text.contains(PairingBook.sha256(paired.secret)))
        let mode = try FileManager.default.attributesOfItem(atPath: book.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        // A new server (a restart) reads the same phone.
        let restarted = PairingBook(directory: directory)
        #expect(try restarted.phones() == [paired.phone])
        #expect(restarted.phone(presenting: paired.secret, now: t0)?.id == paired.phone.id)
        #expect(restarted.phone(presenting: String(repeating: "0", count: 64), now: t0) == nil)
        #expect(restarted.phone(presenting: "short", now: t0) == nil)
        // Last seen is written (at most every 10 minutes).
        _ = restarted.phone(presenting: paired.secret, now: t0.addingTimeInterval(3600))
        restarted.flushLastSeen()
        #expect(try book.phones().first?.lastSeen == t0.addingTimeInterval(3600))
    }

    @Test func aRevokedPhoneIsRefusedAtOnceByAReaderThatIsAlreadyRunning() throws {
        let directory = try TestTools.temporaryDirectory().appendingPathComponent("state").path
        let server = PairingBook(directory: directory)
        let one = try #require(try server.redeem(code: try server.issueCode(now: t0), name: "Android Chrome", now: t0))
        let two = try #require(try server.redeem(code: try server.issueCode(now: t0), name: "Android Chrome", now: t0))
        let three = try #require(try server.redeem(code: try server.issueCode(now: t0), name: "iPad Safari", now: t0))
        #expect(server.phone(presenting: one.secret) != nil)
        // `rig serve --revoke` is another process: another reader of the same file.
        let command = PairingBook(directory: directory)
        #expect(try command.revoke("nobody").isEmpty)
        #expect(try command.revoke(three.phone.id).map(\.id) == [three.phone.id])
        #expect(server.phone(presenting: three.secret) == nil)
        #expect(server.phone(presenting: one.secret) != nil)
        // A name revokes every phone of that name.
        #expect(Set(try command.revoke("Android Chrome").map(\.id)) == [one.phone.id, two.phone.id])
        #expect(server.phone(presenting: one.secret) == nil && server.phone(presenting: two.secret) == nil)
        let four = try #require(try server.redeem(code: try server.issueCode(now: t0), name: "Mac Safari", now: t0))
        #expect(try command.revoke("all").count == 1)
        #expect(server.phone(presenting: four.secret) == nil)
        #expect(try command.phones().isEmpty)
    }

    @Test func aMalformedFileIsAClearErrorAndPairsNoPhone() throws {
        let directory = try TestTools.temporaryDirectory().path
        let book = PairingBook(directory: directory)
        try "{\"version\": 1, \"phones\": [{\"id\": 5}], \"codes\": []}".write(toFile: book.path, atomically: true, encoding: .utf8)
        let error = #expect(throws: PairingError.self) { try book.phones() }
        #expect(error?.description.contains(book.path) == true)
        #expect(error?.description.contains("not a rig serve paired-phones file") == true)
        #expect(error?.description.contains("$.phones[0].id") == true)
        #expect(throws: PairingError.self) { try book.issueCode() }
        #expect(book.phone(presenting: String(repeating: "a", count: 64)) == nil)
        try "not json".write(toFile: book.path, atomically: true, encoding: .utf8)
        #expect(throws: PairingError.self) { try book.revoke("all") }
        try "{\"version\": 7, \"phones\": [], \"codes\": []}".write(toFile: book.path, atomically: true, encoding: .utf8)
        let version = #expect(throws: PairingError.self) { try book.phones() }
        #expect(version?.description.contains("version 7") == true)
    }

    @Test func namesComeFromTheUserAgent() {
        let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36"
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
        #expect(PairingBook.name(fromUserAgent: android) == "Android Chrome")
        #expect(PairingBook.name(fromUserAgent: iphone) == "iPhone Safari")
        #expect(PairingBook.name(fromUserAgent: nil) == "a browser")
        #expect(PairingBook.cleanName("  \u{7}Kitchen\ttablet ") == "Kitchentablet")
        #expect(PairingBook.cleanName(String(repeating: "é", count: 60)).count == 40)
    }
}

@Suite struct QRCodeTests {
    /// Decodes a PGM with Debian's zbarimg (zbar-tools, installed by scripts/setup --test).
    func decoded(_ image: [UInt8]) throws -> String {
        let directory = try TestTools.temporaryDirectory()
        let file = directory.appendingPathComponent("code.pgm")
        try Data(image).write(to: file)
        let process = TestProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        process.arguments = ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }

    @Test(arguments: [
        "http://rig-pi.local:8080/pair?code=ABCD2345",
        "http://192.168.123.234:65535/pair?code=ZZZZ9999",
        "http://a-much-longer-hostname-for-the-rig.local:8080/pair?code=HJKMNPQR",
    ])
    func aRealDecoderReadsTheCodeAndItsTerminalDrawing(url: String) throws {
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/zbarimg"), "zbarimg: \(TestTools.setupHint)")
        let code = try QRCode(url)
        #expect(code.size >= 21 && code.size <= 41)  // versions 1…6
        #expect(try decoded(code.pgm()) == url)
        // The terminal drawing, read back half block by half block, is the same code.
        let text = code.terminalText(colours: false)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let side = code.size + 2 * QRCode.margin
        #expect(lines.count == (side + 1) / 2)
        var modules = [Bool](repeating: false, count: code.size * code.size)
        for (row, line) in lines.enumerated() {
            let cells = Array(line)
            #expect(cells.count == side)
            for (column, cell) in cells.enumerated() {
                let (top, bottom) =
                    switch cell {
                    case "█": (true, true)
                    case "▀": (true, false)
                    case "▄": (false, true)
                    default: (false, false)
                    }
                for (y, dark) in [(2 * row, top), (2 * row + 1, bottom)] {
                    let (mx, my) = (column - QRCode.margin, y - QRCode.margin)
                    if mx >= 0, my >= 0, mx < code.size, my < code.size { modules[my * code.size + mx] = dark } else { #expect(!dark) }
                }
            }
        }
        let redrawn = QRCode(size: code.size, modules: modules)
        #expect(redrawn == code)
        #expect(try decoded(redrawn.pgm(scale: 3)) == url)
        // With colours: black on white whatever the terminal's, reset at each line's end.
        let coloured = code.terminalText()
        #expect(coloured.hasPrefix("\u{1B}[30;47m") && coloured.contains("\u{1B}[0m\n"))
    }

    @Test func pairingURLsNameTheHostAndEveryAddress() {
        let urls = PairingAddresses.urls(hosts: ["rig.local", "10.0.0.2", "::1"], port: 8080, code: "ABCD2345")
        #expect(urls == ["http://rig.local:8080/pair?code=ABCD2345", "http://10.0.0.2:8080/pair?code=ABCD2345", "http://[::1]:8080/pair?code=ABCD2345"])
        #expect(PairingAddresses.hosts(listeningOn: "192.168.4.1") == ["192.168.4.1"])
        let all = PairingAddresses.hosts(listeningOn: "0.0.0.0")
        #expect(!all.isEmpty && !all.contains("127.0.0.1") || all == ["127.0.0.1"])
        #expect(PairingAddresses.ipv4Addresses().allSatisfy { !$0.hasPrefix("127.") })
    }
}

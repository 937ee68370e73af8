import Foundation
import RigTestSupport
import Testing

@testable import RigServe

@Suite struct AccessTokenTests {
    @Test func theFirstStartMakesA0600TokenAndLaterStartsReadIt() throws {
        let path = try TestTools.temporaryDirectory().appendingPathComponent("state/serve-token").path
        let (made, created) = try AccessToken.loadOrCreate(path: path)
        #expect(created)
        #expect(made.text.count == 64)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let (read, createdAgain) = try AccessToken.loadOrCreate(path: path)
        #expect(!createdAgain && read == made)
        // Two tokens are not the same (the bytes are random).
        #expect(try AccessToken.generate() != AccessToken.generate())
    }

    @Test func aTokenFileOthersCanReadIsRefused() throws {
        let path = try TestTools.temporaryDirectory().appendingPathComponent("serve-token").path
        try (String(repeating: "0f", count: 32) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: AccessToken.Failure.self) { try AccessToken.loadOrCreate(path: path) }
    }

    @Test func matchingNeedsEveryCharacter() {
        let token = AccessToken(text: String(repeating: "0f", count: 32))!
        #expect(token.matches(Substring(token.text)))
        #expect(!token.matches(Substring(token.text.dropLast())))
        #expect(!token.matches(Substring(token.text + "0")))
        #expect(!token.matches(Substring(String(repeating: "0f", count: 31) + "0e")))
        #expect(!token.matches(""))
        #expect(AccessToken(text: "not hex") == nil)
    }

    @Test func onlyLoopbackAddressesGoWithoutAToken() {
        #expect(ListenAddress("127.0.0.1:8080")?.isLoopback == true)
        #expect(ListenAddress("[::1]:8080")?.isLoopback == true)
        #expect(ListenAddress("localhost:80")?.isLoopback == true)
        #expect(ListenAddress("0.0.0.0:8080")?.isLoopback == false)
        #expect(ListenAddress(":8080") == ListenAddress(host: "0.0.0.0", port: 8080))
        #expect(ListenAddress("192.168.1.5:8080")?.isLoopback == false)
        #expect(ListenAddress("nonsense") == nil)
        #expect(ListenAddress("host:99999") == nil)
    }
}

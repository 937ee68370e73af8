import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RigTestSupport
import Testing

@testable import RigServe

/// Pairing through Hummingbird's router: a code for a cookie, the cookie wherever the
/// token goes, a revoked cookie refused, wrong codes limited.
@Suite(.serialized) struct ServePairingTests {
    static let token = AccessToken(text: String(repeating: "ab12", count: 16))!

    static func pairBody(_ code: String) -> ByteBuffer { jsonBody(#"{"code": "\#(code)"}"#) }

    static let userAgent: HTTPFields = [
        .contentType: "application/json",
        .userAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36",
    ]

    @Test func aCodeBuysALongLivedCookieThatWorksUntilRevoked() async throws {
        let fixture = try ServeFixture(listen: "0.0.0.0:8080", token: Self.token, pairing: true)
        defer { fixture.finish() }
        let book = try #require(fixture.parts.settings.pairing)
        let code = try book.issueCode()
        try await fixture.application.test(.router) { client in
            // Not paired: 401 that says so, and the pairing page and endpoint are open.
            let refused = try await client.execute(uri: "/api/status", method: .get)
            #expect(refused.status == .unauthorized)
            #expect(refused.json["needsPairing"] as? Bool == true)
            let page = try await client.execute(uri: "/pair?code=\(code)", method: .get)
            #expect(page.status == .ok && page.text.contains("Needs pairing"))
            // Opening the page does not use the code up (a link preview must not).
            #expect(try book.read().codes.count == 1)

            let wrong = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody("ABCD2345"))
            #expect(wrong.status == .unauthorized && wrong.headers[.setCookie] == nil)
            #expect(wrong.json["needsPairing"] as? Bool == true)

            let paired = try await client.execute(
                uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody(PairingBook.shown(code).lowercased()))
            #expect(paired.status == .ok)
            #expect(paired.json["name"] as? String == "Android Chrome")
            let cookie = try #require(paired.headers[.setCookie])
            let attributes = cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            let secret = try #require(attributes.first.flatMap { $0.hasPrefix("rig_paired=") ? String($0.dropFirst("rig_paired=".count)) : nil })
            #expect(secret.count == 64 && secret.allSatisfy(\.isHexDigit))
            #expect(Set(attributes.dropFirst()) == ["Path=/", "Max-Age=31536000", "HttpOnly", "SameSite=Strict"])
            // Used once: the same code again is refused.
            let again = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody(code))
            #expect(again.status == .unauthorized)

            // The cookie goes wherever the token does.
            let withCookie: HTTPFields = [.cookie: "rig_client=x; rig_paired=\(secret)", .contentType: "application/json"]
            #expect(try await client.execute(uri: "/api/status", method: .get, headers: withCookie).status == .ok)
            #expect(try await client.execute(uri: "/api/programs", method: .get, headers: withCookie).status == .ok)
            let moved = try await client.execute(
                uri: "/api/goto", method: .post, headers: withCookie, body: jsonBody(#"{"pose": {"pan": 1}}"#))
            #expect(moved.status == .accepted)
            // The token still works for scripts.
            #expect(try await client.execute(uri: "/api/status", method: .get, headers: .client("s", token: Self.token.text)).status == .ok)

            // Revoked by another process (rig serve --revoke): refused from the next request.
            let phone = try #require(try book.phones().first)
            #expect(try PairingBook(directory: fixture.directory.path).revoke(phone.id).count == 1)
            let revoked = try await client.execute(uri: "/api/status", method: .get, headers: withCookie)
            #expect(revoked.status == .unauthorized && revoked.json["needsPairing"] as? Bool == true)
            let stop = try await client.execute(uri: "/api/stop", method: .post, headers: withCookie)
            #expect(stop.status == .unauthorized)
            #expect(try await client.execute(uri: "/api/status", method: .get, headers: .client("s", token: Self.token.text)).status == .ok)
        }
    }

    @Test func fiveWrongCodesAMinuteLockOutEvenTheRightOne() async throws {
        let fixture = try ServeFixture(listen: "0.0.0.0:8080", token: Self.token, pairing: true)
        defer { fixture.finish() }
        let code = try #require(try fixture.parts.settings.pairing?.issueCode())
        try await fixture.application.test(.router) { client in
            for guess in ["AAAA2222", "AAAA3333", "not a code", "AAAA4444", "AAAA5555"] {
                let reply = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody(guess))
                #expect(reply.status == .unauthorized)
            }
            let locked = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody(code))
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] == "60")
            #expect(locked.headers[.setCookie] == nil)
            fixture.quietFor(seconds: 61)
            let paired = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody(code))
            #expect(paired.status == .ok)
        }
    }

    @Test func pairingIsRefusedFromAnotherSiteAndNeedlessOnLoopback() async throws {
        let fixture = try ServeFixture(listen: "0.0.0.0:8080", token: Self.token, pairing: true)
        defer { fixture.finish() }
        let code = try #require(try fixture.parts.settings.pairing?.issueCode())
        try await fixture.application.test(.router) { client in
            var foreign = Self.userAgent
            foreign[.origin] = "http://evil.example"
            let refused = try await client.execute(uri: "/api/pair", method: .post, headers: foreign, body: Self.pairBody(code))
            #expect(refused.status == .forbidden)
            let form = try await client.execute(
                uri: "/api/pair", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"], body: ByteBuffer(string: "code=\(code)"))
            #expect(form.status == .unsupportedMediaType)
        }
        let open = try ServeFixture()
        defer { open.finish() }
        try await open.application.test(.router) { client in
            let reply = try await client.execute(uri: "/api/pair", method: .post, headers: Self.userAgent, body: Self.pairBody("ABCD2345"))
            #expect(reply.status == .conflict)
            #expect(try await client.execute(uri: "/pair", method: .get).status == .ok)
        }
    }
}

import FoundationEssentials
import Glibc
import HTTPTypes

/// Who may use the API on a server that needs its token: a client that shows the token
/// (`Authorization: Bearer` or the `rig_token` cookie) or a paired phone's `rig_paired`
/// cookie (``PairingBook``). The access check and the connection guard ask the same.
public struct ServeAccess: Sendable {
    public let token: AccessToken
    public let pairing: PairingBook?

    public init(token: AccessToken, pairing: PairingBook?) {
        self.token = token
        self.pairing = pairing
    }

    /// Whether a request's head shows the token or a paired phone's cookie.
    public func grants(_ fields: HTTPFields) -> Bool {
        if AccessMiddleware.presented(in: fields).contains(where: { token.matches($0) }) { return true }
        guard let pairing else { return false }
        return Self.cookies(named: PairingBook.cookieName, in: fields).contains { pairing.phone(presenting: $0) != nil }
    }

    /// Every value of the cookie `name` in a head.
    static func cookies(named name: String, in fields: HTTPFields) -> [Substring] {
        var found: [Substring] = []
        for line in fields[values: .cookie] {
            for pair in line.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " }
                guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == name else { continue }
                found.append(Substring(trimmed[trimmed.index(after: equals)...]))
            }
        }
        return found
    }
}

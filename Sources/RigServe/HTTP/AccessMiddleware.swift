import FoundationEssentials
import Glibc
import HTTPTypes
import Hummingbird
import RigFormat
import RigSky

/// Every request passes here before the router, and everything the router and the access
/// check see is the one path this check accepts:
/// - a path is canonical or refused (400): no empty segment (`//`, a trailing `/`), no
///   `.` or `..` (written or percent-encoded), no encoded `/` or `\`, no control
///   character, well-formed `%XX`; so no variant reaches a route the check did not see;
/// - with a token (any non-loopback listener, or `--token-file`) every path but the page
///   itself (`/`) and pairing (`GET /pair`, `POST /api/pair`) needs it (`Authorization:
///   Bearer TOKEN` or the `rig_token` cookie the page sets from `?token=`) or a paired
///   phone's `rig_paired` cookie: 401 and nothing happens;
/// - without one (a loopback listener) the `Host` must be this machine's (`localhost`,
///   `127.x.x.x`, `[::1]`): a DNS-rebinding page's `Host: evil.example` gets 403;
/// - a request that changes anything (POST, PUT, DELETE) from another origin is refused
///   (403): its `Origin` must be this server's and `Sec-Fetch-Site`, where the browser
///   sends it, same-origin;
/// - a body must be `application/json` (415), so no form or `text/plain` post, the
///   kinds another page may send without asking, is ever parsed;
/// - a body over 64 KB is refused (413), announced or chunked.
/// No CORS headers are ever sent, so another site's page cannot read the API either.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let access: ServeAccess?

    static let cookieName = "rig_token"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > ServeApp.maxBodyBytes {
            throw ServeError(.contentTooLarge, "the body is over \(ServeApp.maxBodyBytes / 1024) KB")
        }
        let path = request.uri.path
        if let problem = Self.pathProblem(path) {
            throw ServeError(.badRequest, "\(problem); paths are canonical here (see /api/openapi.json)")
        }
        if let access {
            if !Self.isOpen(path), !access.grants(request.headers) {
                throw ServeError(
                    .unauthorized,
                    "this phone is not paired: open the pairing URL rig serve printed (or scan its QR code), or enter a code from rig serve --pair at /pair; scripts send the token (Authorization: Bearer TOKEN)",
                    needsPairing: true)
            }
        } else if let host = request.head.authority, !Self.isLoopbackHost(host) {
            throw ServeError(.forbidden, "Host \"\(Self.shown(host))\" is not this server; a loopback listener answers only localhost, 127.0.0.1 or [::1]")
        }
        if ![.get, .head, .options].contains(request.method) {
            if let problem = Self.crossOriginProblem(request) { throw ServeError(.forbidden, problem) }
            if let problem = Self.contentTypeProblem(request) { throw ServeError(.unsupportedMediaType, problem) }
        }
        return try await next(request, context)
    }

    /// The paths open without the token: the page, and pairing.
    static func isOpen(_ path: String) -> Bool {
        path == "/" || path == "/pair" || path == "/api/pair"
    }

    /// The tokens a request presents (header and cookie).
    static func presented(in request: Request) -> [Substring] {
        presented(in: request.headers)
    }

    /// The tokens a request's head presents: `Authorization: Bearer TOKEN` and every
    /// `rig_token` cookie (the connection guard asks before any route runs).
    static func presented(in fields: HTTPFields) -> [Substring] {
        var found: [Substring] = []
        if let header = fields[.authorization], header.hasPrefix("Bearer ") {
            found.append(header.dropFirst("Bearer ".count))
        }
        return found + ServeAccess.cookies(named: cookieName, in: fields)
    }

    /// Why a raw request path is not canonical, or nil when it is.
    static func pathProblem(_ path: String) -> String? {
        guard path.hasPrefix("/") else { return "the path must start with /" }
        guard path != "/" else { return nil }
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        for segment in segments {
            guard !segment.isEmpty else { return "the path has an empty segment (// or a trailing /)" }
            guard let decoded = percentDecoded(segment) else { return "the path has a malformed %-escape" }
            if decoded == [UInt8(ascii: ".")] || decoded == [UInt8(ascii: "."), UInt8(ascii: ".")] {
                return "the path has a . or .. segment"
            }
            if decoded.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") || $0 < 0x20 || $0 == 0x7F }) {
                return "the path has an encoded / or \\ or a control character"
            }
        }
        return nil
    }

    /// `%XX` decoded; nil when an escape is malformed.
    static func percentDecoded(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        var iterator = bytes.makeIterator()
        while let b = iterator.next() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard let h = iterator.next().flatMap(hexValue), let l = iterator.next().flatMap(hexValue) else { return nil }
            out.append(h << 4 | l)
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `localhost`, `127.x.x.x` or `[::1]`, with or without a port.
    static func isLoopbackHost(_ authority: String) -> Bool {
        var host = authority.lowercased()
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<close])
            return host == "::1"
        }
        if let colon = host.lastIndex(of: ":") { host = String(host[..<colon]) }
        if host == "localhost" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Why a changing request looks like another site's, or nil.
    static func crossOriginProblem(_ request: Request) -> String? {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
            return "a request from another site (Sec-Fetch-Site: \(shown(site))) cannot control the rig"
        }
        guard let origin = request.headers[.origin] else { return nil }
        let authority = request.head.authority ?? ""
        guard !authority.isEmpty, origin == "http://" + authority || origin == "https://" + authority else {
            return "a request from another origin (\(shown(origin))) cannot control the rig"
        }
        return nil
    }

    /// Why a changing request's body is not one this API parses, or nil.
    static func contentTypeProblem(_ request: Request) -> String? {
        let type = request.headers[.contentType]
        let hasBody =
            request.headers[.transferEncoding] != nil || (request.headers[.contentLength].flatMap { Int($0) } ?? 0) > 0
        guard let type else {
            return hasBody ? "a body must be sent as Content-Type: application/json" : nil
        }
        let media = type.split(separator: ";", maxSplits: 1)[0].trimmed().lowercased()
        guard media == "application/json" else {
            return "Content-Type \(shown(type)) is not accepted; send application/json"
        }
        return nil
    }

    /// A header value in a message: short, control characters escaped.
    static func shown(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(80) {
            if scalar.value < 0x20 || scalar.value == 0x7F { out += "\\u{\(String(scalar.value, radix: 16))}" } else { out.unicodeScalars.append(scalar) }
        }
        return text.unicodeScalars.count > 80 ? out + "…" : out
    }
}

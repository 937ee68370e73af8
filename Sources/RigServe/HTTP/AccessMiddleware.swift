import Hummingbird

/// Every `/api/` request must carry the token (`Authorization: Bearer TOKEN` or the
/// `rig_token` cookie the page sets from `?token=`) when the server has one; else 401
/// and nothing happens. No CORS headers are ever sent, so another site's page cannot
/// read the API, and the cookie is SameSite=Strict, so it cannot post to it either.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    let token: AccessToken?

    static let cookieName = "rig_token"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > ServeApp.maxBodyBytes {
            throw ServeError(.contentTooLarge, "the body is over \(ServeApp.maxBodyBytes / 1024) KB")
        }
        guard let token, request.uri.path.hasPrefix("/api/") else { return try await next(request, context) }
        guard Self.presented(in: request).contains(where: { token.matches($0) }) else {
            throw ServeError(.unauthorized, "this server needs its token: open the URL it printed (…/?token=…) or send Authorization: Bearer TOKEN")
        }
        return try await next(request, context)
    }

    /// The tokens a request presents (header and cookie).
    static func presented(in request: Request) -> [Substring] {
        var found: [Substring] = []
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            found.append(header.dropFirst("Bearer ".count))
        }
        if let cookie = request.cookies[cookieName] { found.append(Substring(cookie.value)) }
        return found
    }
}

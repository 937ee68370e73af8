import FoundationEssentials
import Glibc
import Hummingbird

/// Turns every error into `{"error": "…"}` with its status (and `"holder"` for a 409 on
/// control), so a client parses one shape.
struct JSONErrorMiddleware: RouterMiddleware {
    typealias Context = ServeContext
    /// The methods a path answers (nil: unknown path), to tell 405 from 404.
    let allowedMethods: @Sendable (String) -> String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServeError {
            return Self.response(error)
        } catch let error as HTTPError where error.status == .notFound {
            if let allowed = allowedMethods(request.uri.path) {
                var response = Self.response(ServeError(.methodNotAllowed, "\(request.method) is not allowed here; allowed: \(allowed)"))
                response.headers[.allow] = allowed
                return response
            }
            return Self.response(ServeError(.notFound, "no such endpoint: \(request.uri.path) (see /api/openapi.json)"))
        } catch let error as HTTPError {
            let message = error.body ?? error.status.reasonPhrase
            return Self.response(ServeError(error.status, message))
        } catch {
            context.logger.error("request \(request.uri.path) failed: \(error)")
            return Self.response(ServeError(.internalServerError, "internal error: \(error)"))
        }
    }

    /// The body of every refusal; absent fields are left out.
    struct Body: Encodable {
        var error: String
        var holder: String?
        var needsPairing: Bool?
    }

    static func response(_ error: ServeError) -> Response {
        let body = Body(error: error.message, holder: error.holder, needsPairing: error.needsPairing ? true : nil)
        let data = (try? JSONEncoder.serve.encode(body)) ?? Data("{\"error\":\"error\"}".utf8)
        var response = Response(
            status: error.status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        if let seconds = error.retryAfter { response.headers[.retryAfter] = String(seconds) }
        return response
    }
}

extension JSONEncoder {
    /// Sorted keys: the same status is the same bytes (the event stream compares them).
    static var serve: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import RigCore

/// The handlers behind `ServeApp`'s routes.
struct ServeRoutes: Sendable {
    let parts: ServeApp.Parts
    private var console: RigConsole { parts.console }
    private var lease: ControlLease { parts.lease }
    private var now: Double { parts.settings.nowSeconds() }

    // MARK: Identity and control

    static let clientHeader = HTTPField.Name("X-Rig-Client")!
    static let clientCookie = "rig_client"

    /// The page's client id (header or cookie), else the peer's address.
    func client(_ request: Request, _ context: ServeContext) -> String {
        let raw = request.headers[Self.clientHeader] ?? request.cookies[Self.clientCookie]?.value
        if let raw, !raw.isEmpty, raw.count <= 64,
            raw.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "-_.:".unicodeScalars.contains($0) })
        {
            return raw
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Takes control for this client or throws 409 naming who holds it.
    func control(_ request: Request, _ context: ServeContext) throws(ServeError) {
        let id = client(request, context)
        if let holder = lease.acquire(id, nowSeconds: now) {
            throw ServeError(
                .conflict, "another client controls the rig (\(holder)); watch, or wait until it stops or is quiet for \(Int(lease.quietSeconds)) s",
                holder: holder)
        }
    }

    // MARK: Bodies

    func body<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        var request = request
        let buffer = try await request.collectBody(upTo: ServeApp.maxBodyBytes)
        do {
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch let DecodingError.keyNotFound(key, _) {
            throw ServeError(.badRequest, "the body needs \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, c), let DecodingError.valueNotFound(_, c) {
            throw ServeError(.badRequest, "\(Self.path(c.codingPath)): \(c.debugDescription)")
        } catch {
            throw ServeError(.badRequest, "the body is not the JSON this endpoint takes (see /api/openapi.json)")
        }
    }

    /// Reads (and bounds) a body this endpoint ignores.
    func drain(_ request: Request) async throws {
        var request = request
        _ = try await request.collectBody(upTo: ServeApp.maxBodyBytes)
    }

    private static func path(_ keys: [CodingKey]) -> String {
        "$" + keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONEncoder.serve.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Axis name → value in a body, as one entry per rig axis (nil: not named).
    func perAxis(_ values: [String: Double], field: String) throws(ServeError) -> [Double?] {
        let names = console.rig.axes.map(\.name)
        for (name, value) in values {
            guard names.contains(name) else {
                throw ServeError(.badRequest, "$.\(field).\(name): the rig has no such axis; valid: \(names.joined(separator: ", "))")
            }
            guard value.isFinite else { throw ServeError(.badRequest, "$.\(field).\(name): not a finite number") }
        }
        return names.map { values[$0] }
    }

    // MARK: Page

    func page(_ request: Request) throws -> Response {
        if let presented = request.uri.queryParameters.get("token") {
            guard let token = parts.settings.token, token.matches(Substring(presented)) else {
                throw ServeError(.unauthorized, "wrong token: open the URL rig serve printed")
            }
            // The token leaves the address bar (and the history) at once; the cookie carries it.
            return Response(
                status: .seeOther,
                headers: [
                    .location: "/",
                    .setCookie: "\(AccessMiddleware.cookieName)=\(token.text); Path=/; HttpOnly; SameSite=Strict",
                    .cacheControl: "no-store",
                ])
        }
        return Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.index_html)))
    }

    // MARK: Watching

    func currentStatus(_ request: Request?, _ context: ServeContext?) -> ServeStatus {
        if let request, let context { lease.touch(client(request, context), nowSeconds: now) }
        return console.status(controller: lease.current(nowSeconds: now))
    }

    func status(_ request: Request, _ context: ServeContext) throws -> Response {
        try Self.json(currentStatus(request, context))
    }

    /// Server-Sent Events: the status on every change, at least every 200 ms while
    /// something moves, a comment every 15 s otherwise (keeps proxies from closing it).
    func events(_ request: Request, _ context: ServeContext) -> Response {
        let id = client(request, context)
        let routes = self
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                var last: Data?
                var lastSent = 0.0
                while !Task.isCancelled {
                    routes.lease.touch(id, nowSeconds: routes.now)
                    let status = routes.currentStatus(nil, nil)
                    let data = try JSONEncoder.serve.encode(status)
                    let t = routes.now
                    if data != last || (status.isMoving && t - lastSent >= 0.2) {
                        try await writer.write(ByteBuffer(string: "data: " + String(decoding: data, as: UTF8.self) + "\n\n"))
                        last = data
                        lastSent = t
                    } else if t - lastSent >= 15 {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        lastSent = t
                    }
                    if routes.console.hasEnded { break }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                try await writer.finish(nil)
            })
    }

    func programs() throws -> Response {
        try Self.json(["programs": parts.library.list(startPose: console.pose)])
    }

    // MARK: Programs

    private struct PlayBody: Decodable {
        var program: String
        var fromStep: Int?
    }

    func play(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(PlayBody.self, request)
        try control(request, context)
        let current = console.status(controller: nil)
        guard current.state == "idle" else {
            throw ServeError(.conflict, "the rig is \(current.state)\(current.program.map { " (\($0))" } ?? ""); stop it first")
        }
        let checked = try parts.library.load(body.program, fromStep: body.fromStep ?? 1, startPose: console.pose)
        if let problem = checked.report.problems.first {
            throw ServeError(.unprocessableContent, "\(body.program): refusing to play (nothing moved): \(problem.description)")
        }
        try console.play(checked.consoleProgram, estimatedSeconds: ProgramLibrary.estimatedSeconds(checked))
        return try Self.json(currentStatus(request, context), status: .accepted)
    }

    func step(_ action: ConsoleRequest, _ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        try control(request, context)
        try console.programRequest(action)
        return try Self.json(currentStatus(request, context), status: .accepted)
    }

    /// Anyone may stop: a stop is never refused for want of control. It ends the
    /// holder's control.
    func stop(_ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        console.stopMotion()
        lease.release()
        return try Self.json(currentStatus(request, context), status: .accepted)
    }

    // MARK: Motion

    private struct JogBody: Decodable { var velocity: [String: Double] }
    private struct PoseBody: Decodable { var pose: [String: Double] }
    private struct MoveReply: Encodable {
        var clamped: [String]
        var status: ServeStatus
    }

    func jog(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(JogBody.self, request)
        let fractions = try perAxis(body.velocity, field: "velocity")
        for (name, v) in body.velocity where abs(v) > 1 {
            throw ServeError(.badRequest, "$.velocity.\(name): \(v) is outside −1…1 (a fraction of maxVelocity)")
        }
        try control(request, context)
        try console.jog(fractions.map { $0 ?? 0 })
        return try Self.json(currentStatus(request, context), status: .accepted)
    }

    func goTo(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(PoseBody.self, request)
        return try move(to: perAxis(body.pose, field: "pose"), request, context)
    }

    private func move(to pose: [Double?], _ request: Request, _ context: ServeContext) throws -> Response {
        try control(request, context)
        let clamped = try console.goTo(pose)
        return try Self.json(MoveReply(clamped: clamped, status: currentStatus(request, context)), status: .accepted)
    }

    // MARK: Poses

    func poseList() throws -> Response {
        try Self.json(["poses": parts.poses.all])
    }

    private func poseName(_ context: ServeContext) throws(ServeError) -> String {
        guard let name = context.parameters.get("name"), PoseBook.isValidName(name) else {
            throw ServeError(.badRequest, "a pose name is 1–64 ASCII letters, digits, '-', '_' or '.', not starting with '.'")
        }
        return name
    }

    private struct SavedPose: Encodable {
        var name: String
        var pose: [String: Double]
    }

    func savePose(_ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        let name = try poseName(context)
        let pose = console.status(controller: nil).pose
        try parts.poses.save(name, pose: pose)
        return try Self.json(SavedPose(name: name, pose: pose))
    }

    func goToPose(_ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        let name = try poseName(context)
        guard let saved = parts.poses.pose(named: name) else { throw ServeError(.notFound, "no saved pose \"\(name)\"") }
        // A pose saved on a rig with other axes moves only the axes it names that exist.
        let pose = console.rig.axes.map { saved[$0.name] }
        return try move(to: pose, request, context)
    }
}

import FoundationEssentials
import Glibc
import HTTPTypes
import Hummingbird
import NIOCore
import RigCore
import RigFormat
import RigRuntime
import RigSky

/// The handlers behind `ServeApp`'s routes.
struct ServeRoutes: Sendable {
    let parts: ServeApp.Parts
    private var console: RigConsole { parts.console }
    private var lease: ControlLease { parts.lease }
    private var now: Double { parts.settings.nowSeconds() }

    // MARK: Identity and control

    static let clientHeader = HTTPField.Name("X-Rig-Client")!
    static let clientCookie = "rig_client"
    static let controlHeader = HTTPField.Name("X-Rig-Control")!
    static let controlCookie = "rig_control"

    /// The name others see for this client: the page's (header or cookie), else its
    /// address. It proves nothing: control is proven by the key (`ControlLease`).
    func displayName(_ request: Request, _ context: ServeContext) -> String {
        let raw = request.headers[Self.clientHeader] ?? request.cookies[Self.clientCookie]?.value
        if let raw, !raw.isEmpty, raw.count <= 64,
            raw.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || $0.properties.numericType != nil || "-_.: ()".unicodeScalars.contains($0) })
        {
            return raw
        }
        return "a client at " + (context.remoteAddress?.ipAddress ?? "an unknown address")
    }

    /// The control key a request presents (header first, then cookie), if any.
    func presentedKey(_ request: Request) -> String? {
        if let header = request.headers[Self.controlHeader], !header.isEmpty { return header }
        return request.cookies[Self.controlCookie]?.value
    }

    /// Takes control for this client or throws 409 naming who holds it. Returns the key
    /// to send back (`reply(_:control:)`).
    func control(_ request: Request, _ context: ServeContext) throws(ServeError) -> String {
        switch lease.acquire(key: presentedKey(request), name: displayName(request, context), nowSeconds: now) {
        case .granted(let key, _): return key
        case .refused(let holder):
            throw ServeError(
                .conflict, "another client controls the rig (\(holder)); watch, or wait until it stops or is quiet for \(Int(lease.quietSeconds)) s",
                holder: holder)
        }
    }

    /// A reply to the holder of control: its key in a header (for the page) and an
    /// HttpOnly, same-site cookie (for a script's cookie jar).
    static func withControl(_ response: Response, key: String) -> Response {
        var response = response
        response.headers[controlHeader] = key
        response.headers[.setCookie] = "\(controlCookie)=\(key); Path=/api; HttpOnly; SameSite=Strict"
        return response
    }

    // MARK: Bodies

    /// The body, bounded (413 over the bound, announced or chunked).
    static func collect(_ request: Request) async throws -> ByteBuffer {
        var request = request
        do {
            return try await request.collectBody(upTo: ServeApp.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw ServeError(.contentTooLarge, "the body is over \(ServeApp.maxBodyBytes / 1024) KB")
        }
    }

    func body<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        let buffer = try await Self.collect(request)
        return try Self.decode(T.self, Data(buffer.readableBytesView))
    }

    /// The body, or nil when there is none (an endpoint whose body is optional).
    func optionalBody<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T? {
        let buffer = try await Self.collect(request)
        let data = Data(buffer.readableBytesView)
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        return try Self.decode(T.self, data)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
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
        _ = try await Self.collect(request)
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
                throw ServeError(.badRequest, "$.\(field).\(elided(name, maxCharacters: 40)): the rig has no such axis; valid: \(quotedList(names))")
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

    /// `GET /pair[?code=…]`: the page, which posts the code (a GET never uses it up: a link
    /// preview or a prefetch must not spend a single-use code) or asks for one.
    func pairingPage() -> Response {
        Response(
            status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: PackageResources.index_html)))
    }

    struct PairRequest: Decodable {
        var code: String
        var name: String?
    }

    struct PairReply: Encodable {
        var id: String
        var name: String
    }

    /// `POST /api/pair`: a pairing code for a long-lived cookie. Wrong codes are limited
    /// (``PairingGate``: 429 past 5 a minute, even for the right one).
    func pair(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(PairRequest.self, request)
        guard parts.settings.token != nil, let book = parts.settings.pairing else {
            throw ServeError(.conflict, "this server needs no pairing: it listens on loopback without a token")
        }
        let gate = parts.settings.pairingGate
        if let wait = gate.retryAfter(nowSeconds: now) {
            let seconds = max(1, Int(wait.rounded(.up)))
            throw ServeError(
                .tooManyRequests, "too many wrong pairing codes: wait \(seconds) s, then enter the code again", retryAfter: seconds)
        }
        let entered = body.name.map { $0.trimmed() } ?? ""
        let name = entered.isEmpty ? PairingBook.name(fromUserAgent: request.headers[.userAgent]) : entered
        let redeemed: (phone: PairedPhone, secret: String)?
        do { redeemed = try book.redeem(code: body.code, name: name) } catch {
            context.logger.error("pairing: \(error)")
            throw ServeError(.internalServerError, "cannot pair: \(error)")
        }
        guard let redeemed else {
            gate.failed(nowSeconds: now)
            throw ServeError(
                .unauthorized, "this pairing code is wrong, used or expired: run rig serve --pair on the rig for a new one",
                needsPairing: true)
        }
        context.logger.notice("paired \(redeemed.phone.name) (id \(redeemed.phone.id))")
        var response = try Self.json(PairReply(id: redeemed.phone.id, name: redeemed.phone.name))
        response.headers[.setCookie] =
            "\(PairingBook.cookieName)=\(redeemed.secret); Path=/; Max-Age=\(PairingBook.cookieMaxAge); HttpOnly; SameSite=Strict"
        return response
    }

    // MARK: Watching

    /// The status; a request carrying the holder's key keeps its control (the page asks
    /// every few seconds while it holds control, so a closed or stalled page loses it).
    func currentStatus(_ request: Request?) -> ServeStatus {
        if let request { lease.touch(key: presentedKey(request), nowSeconds: now) }
        var status = console.status(controller: lease.current(nowSeconds: now))
        status.clock = ServeStatus.clock(now)
        return status
    }

    func status(_ request: Request, _ context: ServeContext) throws -> Response {
        try Self.json(currentStatus(request))
    }

    /// Server-Sent Events: the status when it changes (at most 5 a second while something
    /// moves; once a second when only the clock moves: elapsed time and ETA), and a
    /// `heartbeat` event after 0.5 s without a message, so a page knows within a second
    /// that its link is gone. Watching never keeps control.
    func events(_ request: Request, _ context: ServeContext) -> Response {
        let feed = parts.feed
        // A phone unpaired while it watches loses its stream at the next frame.
        let access = parts.settings.access
        let headers = request.headers
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                var version: Int?
                while !Task.isCancelled, let frame = await feed.next(after: version) {
                    if let access, !access.grants(headers) { break }
                    try await writer.write(frame.bytes)
                    version = frame.version
                }
                try await writer.finish(nil)
            })
    }

    func programs() throws -> Response {
        try Self.json(["programs": parts.library.list(startPose: console.pose, cameraChoices: console.cameraChoicesAtRest())])
    }

    // MARK: Programs

    /// `POST /api/programs/check`: what the builder's program would be (shots, frames,
    /// time, the check's verdict from the pose the rig is at); nothing saved, no control
    /// taken. 422 with the `NAME:LINE:COLUMN: error:` line when the program is malformed.
    func checkProgram(_ request: Request) async throws -> Response {
        let buffer = try await Self.collect(request)
        let draft = try parts.library.draft(body: Array(buffer.readableBytesView), needsName: false)
        return try Self.json(parts.library.check(draft, startPose: console.pose))
    }

    /// `POST /api/programs`: saves the builder's program into `--programs`, checked as
    /// `rig check` checks a file; only the controller may (it takes control, like saving a
    /// pose). 409 when the file exists and `overwrite` is not set.
    func saveProgram(_ request: Request, _ context: ServeContext) async throws -> Response {
        let buffer = try await Self.collect(request)
        let draft = try parts.library.draft(body: Array(buffer.readableBytesView), needsName: true)
        // A refused draft takes no control: checked first, then saved under control.
        _ = try parts.library.check(draft, startPose: console.pose)
        let key = try control(request, context)
        let report = try parts.library.save(draft, startPose: console.pose)
        context.logger.notice("saved program \(report.file ?? "") from the page (\(report.steps) steps)")
        return Self.withControl(try Self.json(report, status: .created), key: key)
    }

    private struct PlayBody: Decodable {
        var program: String
        var fromStep: Int?
        /// Start at once, not at the program's `"start"` (`rig play --start-now`).
        var startNow: Bool?
    }

    /// The last frame's small preview (JPEG); 404 when there is none.
    func lastShotPreview() throws -> Response {
        guard let path = console.lastShotPreview else {
            throw ServeError(.notFound, "no preview: the last frame has none (no camera, no download, or no shot yet)")
        }
        // rig wrote it (a few tens of KB); bounded all the same.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt) ?? nil
        guard let size, size <= 4 << 20, let data = FileManager.default.contents(atPath: path) else {
            throw ServeError(.notFound, "the preview \(path) cannot be read")
        }
        return Response(
            status: .ok, headers: [.contentType: "image/jpeg", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func play(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(PlayBody.self, request)
        // A refused play (a bad name, 404, 422) takes no control: checked first.
        let checked = try parts.library.load(body.program, fromStep: body.fromStep ?? 1, startPose: console.pose)
        if let miss = checked.report.intervalMisses.first {
            throw ServeError(.unprocessableContent, "\(body.program): refusing to play (nothing moved): \(miss); use a longer interval")
        }
        if let problem = checked.report.problems.first {
            throw ServeError(.unprocessableContent, "\(body.program): refusing to play (nothing moved): \(problem.description)")
        }
        if let unchecked = checked.report.unchecked {
            throw ServeError(.unprocessableContent, "\(body.program): refusing to play (nothing moved): \(unchecked.description)")
        }
        // A program with a start waits for it (`StartClock`, as `rig play` waits); one more
        // than a second past is refused unless started now.
        let startNow = body.startNow ?? false
        if let start = checked.program.start, !startNow, let past = StartClock.pastProblem(start, now: console.wallClock()) {
            throw ServeError(
                .unprocessableContent,
                "\(body.program): \(past): refusing to play (nothing moved); give a later \"start\", or play it with \"startNow\": true")
        }
        let current = console.status(controller: nil)
        guard current.state == .idle else {
            throw ServeError(.conflict, "the rig is \(current.state)\(current.program.map { " (\($0))" } ?? ""); stop it first")
        }
        try console.requireCamera(for: checked.consoleProgram)
        // Matched to the camera's choices before control is taken: a refused exposure takes none.
        let exposure = checked.consoleProgram.shooting.timing == nil ? nil : try console.exposurePlan(for: checked.program)
        let key = try control(request, context)
        try console.play(
            checked.consoleProgram, estimatedSeconds: ProgramLibrary.estimatedSeconds(checked), programSha256: checked.sha256,
            exposure: exposure, start: startNow ? nil : checked.program.start)
        return Self.withControl(try Self.json(currentStatus(request), status: .accepted), key: key)
    }

    /// `GET /api/preflight?program=FILE`: what the program needs against what the camera
    /// and this machine have (`RigConsole.preflight`). Reads the camera: 409 while a
    /// program plays.
    func preflight(_ request: Request) async throws -> Response {
        guard let file = request.uri.queryParameters.get("program") else {
            throw ServeError(.badRequest, "program: the program file to check, as ?program=pano.json")
        }
        let checked = try parts.library.load(file, fromStep: 1, startPose: console.pose)
        let console = console
        // The camera's calls block (bounded): on a thread of its own, not the server's.
        return try Self.json(try await Self.onThread { () throws(ServeError) in try console.preflight(checked, file: file) })
    }

    private struct TestShotBody: Decodable {
        var program: String
    }

    /// `POST /api/testshot`: one frame at the program's first settings, shown as the last
    /// shot (`RigConsole.testShot`). Takes control; refused (409) while a program plays.
    func testShot(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(TestShotBody.self, request)
        let checked = try parts.library.load(body.program, fromStep: 1, startPose: console.pose)
        guard !console.isPlaying else { throw ServeError(.conflict, "a program is playing; a test shot is taken at rest") }
        // Matched to the camera's choices first: a refused exposure takes no control.
        let exposure = checked.consoleProgram.shooting.timing == nil ? nil : try console.exposurePlan(for: checked.program)
        let key = try control(request, context)
        let console = console
        let shot = try await Self.onThread { () throws(ServeError) in try console.testShot(checked, file: body.program, exposure: exposure) }
        return Self.withControl(try Self.json(shot), key: key)
    }

    private struct StepBody: Decodable {
        /// The 1-based step the client saw when it asked (Next): refused if the program
        /// is no longer waiting there, so a double tap is one step.
        var step: Int?
    }

    func step(_ action: ProgramRequest, _ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await optionalBody(StepBody.self, request)
        let key = try control(request, context)
        try console.programRequest(action, atStep: body?.step)
        return Self.withControl(try Self.json(currentStatus(request), status: .accepted), key: key)
    }

    /// Anyone may stop: a stop is never refused for want of control. It ends the
    /// holder's control and every jog for good: a press under way, or one that began
    /// before it, moves nothing (a finger still on the pad lifts and presses again), and a
    /// jog without a press moves nothing from now on (`JogGuard`).
    func stop(_ request: Request, _ context: ServeContext) async throws -> Response {
        parts.jogGuard.latchAll(nowSeconds: now)
        console.stopMotion(by: displayName(request, context))
        lease.release()
        _ = try? await drain(request)
        return try Self.json(currentStatus(request), status: .accepted)
    }

    /// Shut down: what STOP does, then the outputs' safe state (the servos released, as
    /// Ctrl-C leaves them) and the end of `rig serve`. Only the controller may: a
    /// photographer packing up, not a watcher. A stop brakes and parks and the servos hold;
    /// a shut down is the one act that lets them go.
    func shutdown(_ request: Request, _ context: ServeContext) async throws -> Response {
        _ = try control(request, context)
        parts.jogGuard.latchAll(nowSeconds: now)
        console.stopMotion(by: displayName(request, context))
        console.requestShutdown()
        lease.release()
        _ = try? await drain(request)
        return try Self.json(currentStatus(request), status: .accepted)
    }

    // MARK: Motion

    private struct JogBody: Decodable {
        var velocity: [String: Double]
        /// The page's press id, sequence within the press, ms since the press began, and
        /// when it began (ms on the server's clock, the status's `clock`).
        var press: String?
        var seq: Int?
        var t: Double?
        var began: Double?
    }
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
        if let press = body.press, press.isEmpty || press.unicodeScalars.count > 64 { throw ServeError(.badRequest, "$.press: 1–64 characters") }
        // A day of press and a clock up to year 2286 in ms: anything else is not a page's.
        if let t = body.t, !(t.isFinite && abs(t) <= 86_400_000) { throw ServeError(.badRequest, "$.t: ms since the press began, within a day") }
        if let began = body.began, !(began.isFinite && began >= 0 && began <= 1e13) {
            throw ServeError(.badRequest, "$.began: ms on the status's clock (0…1e13)")
        }
        let stopping = body.velocity.values.allSatisfy { $0 == 0 }
        let verdict = parts.jogGuard.judge(
            press: body.press, seq: body.seq, sentMilliseconds: body.t, beganMilliseconds: body.began, stopping: stopping, nowSeconds: now)
        if case .drop(let reason) = verdict {
            throw ServeError(.conflict, "jog \(reason)")
        }
        let key = try control(request, context)
        try console.jog(fractions.map { $0 ?? 0 })
        // The accepted command's state: the loop takes the jog up on its next tick, and a
        // reply saying "idle" made the page flicker.
        var reply = currentStatus(request)
        if reply.program == nil { reply.state = stopping ? .idle : .jogging }
        return Self.withControl(try Self.json(reply, status: .accepted), key: key)
    }

    func goTo(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(PoseBody.self, request)
        return try move(to: perAxis(body.pose, field: "pose"), request, context)
    }

    private func move(to pose: [Double?], _ request: Request, _ context: ServeContext) throws -> Response {
        let key = try control(request, context)
        let clamped = try console.goTo(pose)
        var reply = currentStatus(request)
        if reply.program == nil { reply.state = .moving }  // the accepted move's, not the tick before it
        return Self.withControl(try Self.json(MoveReply(clamped: clamped, status: reply), status: .accepted), key: key)
    }

    private struct AimBody: Decodable {
        var x: Double
        var y: Double
        var aspect: Double?
        var fovDeg: Double?
    }
    private struct AimReply: Encodable {
        var pan: Double
        var tilt: Double
        var status: ServeStatus
    }

    /// `POST /api/aim`: tap to aim (`RigConsole.aim`). Takes control, like a go-to.
    func aim(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(AimBody.self, request)
        for (name, v) in [("x", body.x), ("y", body.y)] where !(v.isFinite && (0...1).contains(v)) {
            throw ServeError(.badRequest, "$.\(name): a fraction of the view, 0…1 (from its left or top edge)")
        }
        if let a = body.aspect, !(a.isFinite && (0.2...5).contains(a)) { throw ServeError(.badRequest, "$.aspect: the view's width / height, 0.2…5") }
        if let f = body.fovDeg, !(f.isFinite && (1...170).contains(f)) {
            throw ServeError(.badRequest, "$.fovDeg: the lens's horizontal field of view, 1…170°")
        }
        // Worked out (and refused) before control is taken: a refused tap takes nothing.
        let target = try console.aimPose(x: body.x, y: body.y, aspect: body.aspect ?? 1.5, fovDeg: body.fovDeg)
        let key = try control(request, context)
        _ = try console.goTo(target.pose)
        var reply = currentStatus(request)
        if reply.program == nil { reply.state = .moving }
        let rounded = { (v: Double) in (v * 1000).rounded() / 1000 }
        return Self.withControl(
            try Self.json(AimReply(pan: rounded(target.pan), tilt: rounded(target.tilt), status: reply), status: .accepted), key: key)
    }

    private struct FocusBody: Decodable {
        var x: Double
        var y: Double
        var aspect: Double?
    }
    private struct FocusReply: Encodable {
        var cameraX: Int
        var cameraY: Int
        /// The camera's coordinates: [width, height].
        var grid: [Int]
        var setting: String
        var focused: Bool?
    }

    /// `POST /api/focus`: tap to focus (`RigConsole.focus`): the camera's AF point to the
    /// view's point, and focus. Takes control; a camera that cannot is refused with its one
    /// line before control is taken.
    func focus(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(FocusBody.self, request)
        for (name, v) in [("x", body.x), ("y", body.y)] where !(v.isFinite && (0...1).contains(v)) {
            throw ServeError(.badRequest, "$.\(name): a fraction of the view, 0…1 (from its left or top edge)")
        }
        if let a = body.aspect, !(a.isFinite && (0.2...5).contains(a)) { throw ServeError(.badRequest, "$.aspect: the view's width / height, 0.2…5") }
        if let problem = console.focusPointProblem { throw ServeError(.conflict, problem) }
        let key = try control(request, context)
        let aspect = body.aspect ?? console.liveViewAspect ?? 1.5
        // The camera's call blocks (bounded): on a thread of its own, not the server's.
        let console = console
        let report = try await Self.onThread { () throws(ServeError) in try console.focus(x: body.x, y: body.y, aspect: aspect) }
        let reply = FocusReply(
            cameraX: report.cameraX, cameraY: report.cameraY, grid: [report.grid.width, report.grid.height], setting: report.setting, focused: report.focused)
        return Self.withControl(try Self.json(reply), key: key)
    }

    /// Runs blocking work on a thread of its own and waits for it.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () throws(ServeError) -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            SystemThread.start(name: "rig-serve-call") {
                do throws(ServeError) { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    // MARK: Exposure

    private struct NudgeBody: Decodable {
        /// The nudge to set, EV (positive brighter); or `by`: EV to add to it.
        var ev: Double?
        var by: Double?
    }
    private struct NudgeReply: Encodable { var nudgeEV: Double }

    /// The photographer's nudge on the playing ramp: `{"ev": 0.33}` sets it, `{"by": -0.33}`
    /// adds to it; the ramp moves to it smoothly. Takes control.
    func nudge(_ request: Request, _ context: ServeContext) async throws -> Response {
        let body = try await body(NudgeBody.self, request)
        guard (body.ev == nil) != (body.by == nil) else { throw ServeError(.badRequest, "give \"ev\" (the nudge to set) or \"by\" (EV to add), one of them") }
        for value in [body.ev, body.by].compactMap({ $0 }) where !value.isFinite || abs(value) > 6 {
            throw ServeError(.badRequest, "a nudge is EV within ±6 (the ramp holds it to ±3)")
        }
        // Refused with no ramp playing before control is taken.
        try console.requireRampPlaying()
        let key = try control(request, context)
        let ev = try console.nudge(set: body.ev, by: body.by)
        return Self.withControl(try Self.json(NudgeReply(nudgeEV: (ev * 1000).rounded() / 1000)), key: key)
    }

    // MARK: Poses

    func poseList() throws -> Response {
        try Self.json(["poses": parts.poses.all])
    }

    private func poseName(_ context: ServeContext) throws(ServeError) -> String {
        // The router hands over the segment as sent: %-escapes (a space, an accent) decoded here.
        guard let raw = context.parameters.get("name"), let bytes = AccessMiddleware.percentDecoded(raw.utf8),
            let name = String(validating: bytes, as: UTF8.self), PoseBook.isValidName(name)
        else {
            throw ServeError(
                .badRequest, "a pose name is 1–64 letters (accented Latin ones too), digits, spaces, '-', '_' or '.', not starting with '.' or a space")
        }
        return name
    }

    private struct SavedPose: Encodable {
        var name: String
        var pose: [String: Double]
    }

    /// Saving or deleting a pose changes what the controller works with: it takes control
    /// (409 while another client holds it), like a move.
    func savePose(_ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        let name = try poseName(context)
        let key = try control(request, context)
        let pose = console.status(controller: nil).pose
        try parts.poses.save(name, pose: pose)
        return Self.withControl(try Self.json(SavedPose(name: name, pose: pose)), key: key)
    }

    func deletePose(_ request: Request, _ context: ServeContext) async throws -> Response {
        try await drain(request)
        let name = try poseName(context)
        let key = try control(request, context)
        try parts.poses.delete(name)
        return Self.withControl(try Self.json(["deleted": name]), key: key)
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

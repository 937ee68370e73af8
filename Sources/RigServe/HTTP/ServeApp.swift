import FoundationEssentials
import Glibc
import Hummingbird
import Logging
import RigCore
import RigFormat

/// The HTTP API and the page of `rig serve` (see docs/serve.md and the OpenAPI document
/// at `/api/openapi.json`).
public enum ServeApp {
    /// Request bodies larger than this are refused (413).
    public static let maxBodyBytes = 64 * 1024

    /// What the routes work on.
    public struct Parts: Sendable {
        public var console: RigConsole
        public var library: ProgramLibrary
        public var poses: PoseBook
        public var lease: ControlLease
        public var settings: ServeSettings
        /// Jogs that a finger on the screen does not mean now are dropped.
        public var jogGuard: JogGuard
        /// `/api/events`: one status computed and encoded for every client.
        let feed: StatusFeed

        public init(
            console: RigConsole, library: ProgramLibrary, poses: PoseBook, lease: ControlLease, settings: ServeSettings,
            jogGuard: JogGuard = JogGuard(maxAgeSeconds: 0.25)
        ) {
            feed = StatusFeed(
                now: settings.nowSeconds, ended: { console.hasEnded },
                status: { console.status(controller: lease.current(nowSeconds: settings.nowSeconds())) })
            // The stream wakes on what the loop does (and on requests, `FeedPokeMiddleware`).
            console.onChange { [feed] in feed.poke() }
            self.console = console
            self.library = library
            self.poses = poses
            self.lease = lease
            self.settings = settings
            self.jogGuard = jogGuard
        }
    }

    public static func application(
        _ parts: Parts, logger: Logger,
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let pool = ConnectionPool(limits: parts.settings.connections)
        let access = parts.settings.access
        return Application(
            router: router(parts),
            server: .http1(
                configuration: .init(additionalChannelHandlers: [ConnectionGuard(pool: pool, access: access)])),
            configuration: .init(
                address: .hostname(parts.settings.listen.host, port: parts.settings.listen.port),
                serverName: "rig"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    public static func router(_ parts: Parts) -> Router<ServeContext> {
        let router = Router(context: ServeContext.self)
        router.add(middleware: JSONErrorMiddleware(allowedMethods: allowedMethods(for:)))
        router.add(middleware: AccessMiddleware(access: parts.settings.access))
        router.add(middleware: FeedPokeMiddleware(feed: parts.feed))
        let routes = ServeRoutes(parts: parts)

        router.get("/") { request, _ in try routes.page(request) }
        router.get("/pair") { _, _ in routes.pairingPage() }
        router.post("/api/pair") { request, context in try await routes.pair(request, context) }
        let document = openAPIDocument(for: parts.console.rig)
        router.get("/api/openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
        router.get("/api/status") { request, context in try routes.status(request, context) }
        router.get("/api/events") { request, context in routes.events(request, context) }
        router.get("/api/programs") { _, _ in try routes.programs() }
        router.post("/api/programs") { request, context in try await routes.saveProgram(request, context) }
        router.post("/api/programs/check") { request, _ in try await routes.checkProgram(request) }
        router.get("/api/last-shot/preview") { _, _ in try routes.lastShotPreview() }
        router.get("/api/liveview") { request, context in try await routes.liveView(request, context) }
        router.post("/api/play") { request, context in try await routes.play(request, context) }
        router.get("/api/preflight") { request, _ in try await routes.preflight(request) }
        router.post("/api/testshot") { request, context in try await routes.testShot(request, context) }
        for (name, action) in [("next", ProgramRequest.next), ("back", .back), ("redo", .redo), ("pause", .pause), ("resume", .resume)] {
            router.post("/api/\(name)") { request, context in try await routes.step(action, request, context) }
        }
        router.post("/api/stop") { request, context in try await routes.stop(request, context) }
        router.post("/api/shutdown") { request, context in try await routes.shutdown(request, context) }
        router.post("/api/jog") { request, context in try await routes.jog(request, context) }
        router.post("/api/goto") { request, context in try await routes.goTo(request, context) }
        router.post("/api/nudge") { request, context in try await routes.nudge(request, context) }
        router.post("/api/aim") { request, context in try await routes.aim(request, context) }
        router.post("/api/focus") { request, context in try await routes.focus(request, context) }
        router.get("/api/poses") { _, _ in try routes.poseList() }
        router.put("/api/poses/:name") { request, context in try await routes.savePose(request, context) }
        router.delete("/api/poses/:name") { request, context in try await routes.deletePose(request, context) }
        router.post("/api/poses/:name/goto") { request, context in try await routes.goToPose(request, context) }
        return router
    }

    /// The methods a path answers, for 405 (nil: no such path, 404).
    static func allowedMethods(for path: String) -> String? {
        switch path {
        case "/", "/pair", "/api/status", "/api/events", "/api/openapi.json", "/api/poses", "/api/last-shot/preview", "/api/liveview",
            "/api/preflight":
            return "GET"
        case "/api/programs": return "GET, POST"
        case "/api/pair", "/api/play", "/api/next", "/api/back", "/api/redo", "/api/pause", "/api/resume", "/api/stop", "/api/shutdown", "/api/jog",
            "/api/goto", "/api/nudge", "/api/aim", "/api/focus", "/api/programs/check", "/api/testshot":
            return "POST"
        default:
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            if parts.count == 4, parts[1] == "api", parts[2] == "poses" { return "PUT, DELETE" }
            if parts.count == 5, parts[1] == "api", parts[2] == "poses", parts[4] == "goto" { return "POST" }
            return nil
        }
    }

    /// The committed OpenAPI document (Resources/openapi.json), with this rig's axis names
    /// as the only properties of a pose and a jog velocity, so a client (or a fuzzer)
    /// knows exactly which bodies the server takes.
    static func openAPIDocument(for rig: Rig) -> [UInt8] {
        let committed = PackageResources.openapi_json
        var parser = JSONParser(bytes: committed)
        guard let root = try? parser.parseDocument() else { return committed }
        var positions: [JSONMember] = []
        var fractions: [JSONMember] = []
        for axis in rig.axes {
            positions.append(
                .named(
                    axis.name, ["type": .text("number"), "description": .text("\(axis.unit), soft limits \(rounded(axis.softMin))…\(rounded(axis.softMax))")]))
            fractions.append(.named(axis.name, ["type": .text("number"), "minimum": .number(-1), "maximum": .number(1)]))
        }
        func only(_ properties: [JSONMember]) -> (JSONValue) -> JSONValue? {
            { $0.setting("properties", .object(properties))?.setting("additionalProperties", .bool(false)) }
        }
        guard let pose = root.value.updating(["components", "schemas", "Pose"], only(positions)),
            let document = pose.updating(["components", "schemas", "JogRequest", "properties", "velocity"], only(fractions))
        else { return committed }
        return Array(JSONText.value(document, sortedKeys: true).utf8)
    }
}

extension JSONValue {
    /// A string value.
    fileprivate static func text(_ s: String) -> JSONValue { .string(JSONString(s)) }

    /// The object with `key` set to `value` (replaced where it was, else added); nil if
    /// this is not an object.
    fileprivate func setting(_ key: String, _ value: JSONValue) -> JSONValue? {
        guard case .object(var members) = self else { return nil }
        if let i = members.firstIndex(where: { $0.key == key }) {
            members[i].value.value = value
        } else {
            members.append(.named(key, value))
        }
        return .object(members)
    }

    /// The value with the one at `path` (object keys) changed by `change`; nil if the path
    /// is not there or `change` refuses.
    fileprivate func updating(_ path: ArraySlice<String>, _ change: (JSONValue) -> JSONValue?) -> JSONValue? {
        guard let key = path.first else { return change(self) }
        guard case .object(let members) = self, let member = members.first(where: { $0.key == key }),
            let inner = member.value.value.updating(path.dropFirst(), change)
        else { return nil }
        return setting(key, inner)
    }
}

extension JSONMember {
    /// A member made here (no source location).
    fileprivate static func named(_ key: String, _ value: JSONValue) -> JSONMember {
        JSONMember(name: JSONString(key), keyLocation: SourceLocation(line: 0, column: 0), value: JSONNode(value, at: SourceLocation(line: 0, column: 0)))
    }

    fileprivate static func named(_ key: String, _ members: KeyValuePairs<String, JSONValue>) -> JSONMember {
        named(key, .object(members.map { named($0.key, $0.value) }))
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import RigCore
import RigRuntime
import RigTestSupport
import Synchronization

@testable import RigServe

/// A server's parts around a real `RigConsole` running the simulated rig on the real
/// loop (real time, no real-time scheduling), with its programs and state in a fresh
/// folder. The lease's clock is the test's: `quietFor(seconds:)` moves it.
final class ServeFixture: Sendable {
    static let rigText = """
        {"name": "test head", "loopRateHz": 100, "output": {"type": "sim"},
         "axes": [
          {"name": "pan", "channel": 0, "pulseUs": [500, 2500], "angleDeg": [-90, 90], "home": 0, "park": 0,
           "softLimits": [-85, 85], "maxVelocity": 60, "maxAcceleration": 120, "idle": "hold"},
          {"name": "tilt", "channel": 1, "pulseUs": [1000, 2000], "angleDeg": [-45, 45], "home": 0, "park": 0,
           "softLimits": [-40, 45], "maxVelocity": 40, "maxAcceleration": 80, "idle": "hold"}]}
        """

    let directory: URL
    let rig: Rig
    let console: RigConsole
    let parts: ServeApp.Parts
    private let leaseNow = LeaseClock()

    /// - Parameters:
    ///   - rigText: the served rig (default `rigText`).
    ///   - camera: the rig's camera, as `rig serve` opens it; its shot logs go in `directory/runs`.
    init(
        listen: String = "127.0.0.1:8080", token: AccessToken? = nil, programs: [String: String] = [:], rigText: String = ServeFixture.rigText,
        camera: Camera? = nil, pairing: Bool = false, wallClock: (@Sendable () -> Double)? = nil
    ) throws {
        directory = try TestTools.temporaryDirectory()
        let programDirectory = directory.appendingPathComponent("programs")
        try FileManager.default.createDirectory(at: programDirectory, withIntermediateDirectories: true)
        for (name, text) in programs {
            try text.write(to: programDirectory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        rig = try RigParser.parse(text: rigText, file: "test-rig.json")
        console = RigConsole(
            rig: rig, output: SimOutput(config: SimOutputConfig(), rig: rig), startPose: rig.homePose,
            options: SessionOptions(loop: LoopOptions(realtime: false)), logger: Logger(label: "test"), camera: camera,
            shotLogs: RunLogDirectory(stateDirectory: directory.path), wallClock: wallClock ?? { Date().timeIntervalSince1970 })
        try console.start()
        let now = leaseNow
        parts = ServeApp.Parts(
            console: console,
            library: ProgramLibrary(directory: programDirectory.path, rig: rig, rigText: rigText, rigPath: "test-rig.json"),
            poses: try PoseBook(directory: directory.path),
            lease: ControlLease(),
            settings: ServeSettings(
                listen: ListenAddress(listen)!, token: token, pairing: pairing ? PairingBook(directory: directory.path) : nil,
                nowSeconds: { now.seconds }))
    }

    /// Moves the lease's clock on.
    func quietFor(seconds: Double) { leaseNow.advance(seconds) }

    /// The server's clock (the test's) as a status's `clock` and a jog's `began` give it.
    var clockMilliseconds: Double { ServeStatus.clock(leaseNow.seconds) }

    var application: some ApplicationProtocol {
        Application(router: ServeApp.router(parts))
    }

    /// The loop's tick count.
    var ticks: Int { console.loopStatus?.ticks ?? 0 }

    /// Waits (bounded) until the loop has run `count` more ticks.
    func waitTicks(_ count: Int) async throws {
        let target = ticks + count
        _ = try await poll(every: .milliseconds(10), for: .seconds(20)) { [self] in ticks >= target ? true : nil }
    }

    /// Waits (bounded) until the status satisfies `condition`.
    @discardableResult
    func waitStatus(for limit: Duration = .seconds(30), _ condition: @escaping @Sendable (ServeStatus) -> Bool) async throws -> ServeStatus {
        try await poll(every: .milliseconds(10), for: limit) { [self] in
            let s = console.status(controller: nil)
            return condition(s) ? s : nil
        }
    }

    /// Parks the rig and ends the session.
    func finish() {
        console.requestShutdown()
        _ = console.waitUntilEnded()
        try? FileManager.default.removeItem(at: directory)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    /// The control key the server gave with this reply, if any.
    var controlKey: String? { headers[HTTPField.Name("X-Rig-Control")!] }
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }
}

func jsonBody(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

extension HTTPFields {
    /// A client named `id` (what others see); `key`: the control key a reply gave it.
    static func client(_ id: String, token: String? = nil, key: String? = nil) -> HTTPFields {
        var fields: HTTPFields = [HTTPField.Name("X-Rig-Client")!: id, .contentType: "application/json"]
        if let token { fields[.authorization] = "Bearer \(token)" }
        if let key { fields[HTTPField.Name("X-Rig-Control")!] = key }
        return fields
    }
}

/// The control lease's clock in a test: moved on by hand.
final class LeaseClock: Sendable {
    private let now = Mutex(1000.0)
    var seconds: Double { now.withLock { $0 } }
    func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
}

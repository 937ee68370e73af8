import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDevices
import RigFormat
import RigGroup
import RigRuntime
import RigServe

/// `rig serve http`: the JSON API and the phone page on Hummingbird (docs/serve.md).
struct ServeHTTPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Control the rig from a phone or a browser over HTTP.",
        discussion: """
            Opens the output once and holds it until SIGINT, SIGTERM or SIGHUP, which park the \
            rig and leave every output in its safe state. Listens on loopback unless told \
            otherwise; any other address requires a token (made on first start, printed once) \
            or a paired phone: each start prints a pairing URL with a one-time code (and a QR \
            code on a terminal). --pair makes a new code for a running server, --list-paired \
            and --revoke manage the paired phones. See docs/serve.md.
            """
    )

    @Option(help: "The rig file (not needed with --pair, --list-paired or --revoke).")
    var rig: String?

    @Flag(help: "Make a new pairing code for the server (running or not), print its URLs and QR code, and exit.")
    var pair = false

    @Flag(help: "List the paired phones and exit.")
    var listPaired = false

    @Option(help: ArgumentHelp("Unpair phones (a running server refuses them at once) and exit.", valueName: "name|id|all"))
    var revoke: String?

    @Option(help: ArgumentHelp("A folder of program files (*.json) the page can play.", valueName: "dir"))
    var programs: String?

    @Option(help: ArgumentHelp("Address and port to listen on (0 picks a free port).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(
        help: ArgumentHelp("The token file (default: serve-token in the state directory); giving one requires the token even on loopback.", valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("Output to use instead of the rig file's: sim.", valueName: "output"))
    var output: String?

    @Option(
        help: ArgumentHelp(
            "Connections that showed the token at most (event streams included; a quarter more may wait to show it, 4 more are kept for STOP and the status).",
            valueName: "n"))
    var maxConnections = ConnectionLimits().maxConnections

    @Option(
        help: ArgumentHelp(
            "Seconds a request (head and body) may take to arrive, from the connection's start or the previous response's end; a slower one is closed.",
            valueName: "seconds"))
    var requestTimeout = ConnectionLimits().requestSeconds

    @Flag(help: "Do not fire the rig's camera (programs play without shots).")
    var noShoot = false

    @OptionGroup(title: "Leading a group of rigs (see docs/multi-rig.md)") var groupOptions: GroupOptions

    @OptionGroup var runOptions: SessionRunOptions

    @OptionGroup var log: LogOptions

    func validate() throws {
        let admin = [pair, listPaired, revoke != nil].filter { $0 }.count
        guard admin <= 1 else { throw ValidationError("--pair, --list-paired and --revoke: one at a time") }
        guard admin == 1 || rig != nil else { throw ValidationError("Missing expected argument '--rig <rig>'") }
        guard ListenAddress(listen) != nil else { throw ValidationError("--listen \(listen): expected HOST:PORT, such as 0.0.0.0:8080") }
        guard (1...10_000).contains(maxConnections) else { throw ValidationError("--max-connections \(maxConnections): valid: 1…10000") }
        guard requestTimeout >= 0.1, requestTimeout <= 3600 else { throw ValidationError("--request-timeout: valid: 0.1…3600 seconds") }
        if let output, output != "sim" {
            throw ValidationError("--output \(output): only \"sim\" can replace the rig file's output")
        }
    }

    func run() throws {
        let logger = log.bootstrap()
        let address = ListenAddress(listen) ?? ListenAddress(host: "127.0.0.1", port: 8080)
        if pair || listPaired || revoke != nil {
            try runPairing(address: address)
            return
        }
        guard let rig else { throw ValidationError("Missing expected argument '--rig <rig>'") }
        let rigText: String
        do { rigText = try FileLoading.readText(rig) } catch {
            printError(error.description)
            throw ExitCode(2)
        }
        var model = try FileLoading.loadRig(rig)
        if output == "sim" { model.output = .sim }
        if let programs {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: programs, isDirectory: &isDirectory), isDirectory else {
                printError("--programs \(programs): no such folder")
                throw ExitCode(2)
            }
        }
        guard let stateDirectory = StateDirectory.default() else {
            printError("error: no state directory (set HOME or XDG_STATE_HOME)")
            throw ExitCode(1)
        }

        // The token first: a server that cannot guard itself does not start the rig.
        var token: AccessToken?
        var tokenCreated = false
        if !address.isLoopback || tokenFile != nil {
            do {
                (token, tokenCreated) = try AccessToken.loadOrCreate(path: tokenFile ?? stateDirectory + "/serve-token")
            } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
        }
        let poses: PoseBook
        do { poses = try PoseBook(directory: stateDirectory) } catch {
            printError(error.message)
            throw ExitCode(2)
        }
        if let warning = poses.loadWarning { logger.warning("\(warning)") }

        var options = try SessionSetup.options(runOptions, loop: LoopOptions(stopWhenLimited: false), inputs: [rig], rig: model)
        // A `"liveView"` settle: each program's steps wait for the camera's live view to be
        // still, measured only while the program plays.
        if let settle = model.settle, settle.sensor == .liveView, !noShoot, model.camera != nil {
            options.stillness = LiveViewStillnessOnDemand(fieldOfViewDegrees: settle.fieldOfViewDegrees, speed: options.loop.speed)
            logger.notice("settle: measured in the camera's live view while a program plays (joined for its steps, left when it ends)")
        } else if model.settle?.sensor == .liveView {
            logger.notice("settle: no camera here (--no-shoot or none in the rig file), so no live view to measure: each step's fixed settleSeconds applies")
        }
        if !noShoot { try PlayCommand.checkFolders(model) }
        let setup = try SessionSetup.open(model, logger: logger)
        let device = setup.output
        let start = setup.start
        // The rig's camera fires at every step of the programs the server plays, as in `rig play`.
        // One that is off or not found does not keep the server down (a service would restart
        // it forever): it serves without it, says so, and uses it once it is found.
        var camera: Camera?
        if !noShoot, let cameraConfig = model.camera {
            do { camera = try CameraBackends.open(model, searchSeconds: 5, logger: logger) } catch {
                let rigModel = model
                logger.warning("camera: \(error); serving without it, looking for it every 3 s (programs that shoot wait for it)")
                camera = LateCamera(
                    reportsShotDone: CameraBackends.reportsShotDone(cameraConfig), firstProblem: "\(error)", logger: logger,
                    open: {
                        guard let found = try CameraBackends.open(rigModel, searchSeconds: 2, logger: logger) else {
                            throw CameraError("the rig has no camera")
                        }
                        return found
                    })
            }
        }
        let shotLogs = StateDirectory.default().map { RunLogDirectory(stateDirectory: $0) }
        // Leading a group: every program played here is played by the group.
        let leading = try GroupRequest(groupOptions).map { request in
            GroupLeading(settings: try request.settings(rig: model, sha: "", firstStep: 0), clock: { ClockReport.measured() })
        }
        let console = RigConsole(
            rig: model, output: device, startPose: start.pose, options: options, logger: logger, camera: camera, shotLogs: shotLogs,
            group: leading)
        do { try console.start() } catch {
            printError("error: \(error.message)")
            throw ExitCode(1)
        }

        // With a token, phones pair: a code for this start, printed with its URLs below.
        var pairing: PairingBook?
        var code: String?
        if token != nil {
            let book = PairingBook(directory: stateDirectory)
            do { code = try book.issueCode() } catch {
                printError("error: \(error)")
                throw ExitCode(1)
            }
            pairing = book
        }
        var settings = ServeSettings(listen: address, token: token, pairing: pairing)
        settings.connections = ConnectionLimits(maxConnections: maxConnections, requestSeconds: requestTimeout)
        let parts = ServeApp.Parts(
            console: console,
            library: ProgramLibrary(
                directory: programs, rig: noShoot ? Self.withoutCamera(model) : model, rigText: rigText, rigPath: rig,
                cameraReportsShots: model.camera.map(CameraBackends.reportsShotDone) ?? false,
                cameraProblem: { CameraBackends.problem($0) }),
            poses: poses, lease: ControlLease(), settings: settings)
        let printedToken = tokenCreated ? token : nil
        let pairingCode = code
        let needsToken = token != nil
        let server = ServeServer(
            parts, logger: logger,
            onServerRunning: { port in
                let host = address.host == "0.0.0.0" || address.host == "::" ? ProcessInfo.processInfo.hostName : address.host
                let url = "http://\(host.contains(":") ? "[\(host)]" : host):\(port)/"
                if let printedToken {
                    say(
                        "rig serve: open \(url)?token=\(printedToken.text) on the phone (printed once; the token is kept in \(tokenFile ?? stateDirectory + "/serve-token"))"
                    )
                } else {
                    say(
                        "rig serve: listening on \(url)\(!needsToken ? "" : " (token required: the one in \(tokenFile ?? stateDirectory + "/serve-token"), or a paired phone)")"
                    )
                }
                if let pairingCode { Self.showPairing(code: pairingCode, host: address.host, port: port) }
            })
        server.start()
        // The session ends on SIGINT/SIGTERM/SIGHUP (park, safe state) or a fault; the
        // server goes with it.
        let summary = console.waitUntilEnded()
        server.stopAndWait()
        if let error = server.error {
            printError("error: the HTTP server failed: \(error)")
            throw ExitCode(1)
        }
        if let summary { try SessionSetup.end(summary) }
        say("rig serve: parked, outputs safe; bye")
    }

    /// `--pair`, `--list-paired`, `--revoke`: the paired-phones file in the state directory
    /// (a running server rereads it when it changes).
    private func runPairing(address: ListenAddress) throws {
        guard let stateDirectory = StateDirectory.default() else {
            printError("error: no state directory (set HOME or XDG_STATE_HOME)")
            throw ExitCode(1)
        }
        let book = PairingBook(directory: stateDirectory)
        do {
            if pair {
                Self.showPairing(code: try book.issueCode(), host: address.host, port: address.port == 0 ? 8080 : address.port)
            } else if listPaired {
                let phones = try book.phones()
                if phones.isEmpty { say("rig serve: no paired phones (\(book.path))") }
                for phone in phones {
                    say("\(phone.id)  \(phone.name)  paired \(Self.shown(phone.created))  last seen \(Self.shown(phone.lastSeen))")
                }
            } else if let revoke {
                let removed = try book.revoke(revoke)
                guard !removed.isEmpty else {
                    let known = try book.phones().map { "\($0.id) (\($0.name))" }
                    printError(
                        "error: --revoke \(revoke): no paired phone has that name or id; paired: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
                    throw ExitCode(1)
                }
                for phone in removed { say("rig serve: revoked \(phone.id) (\(phone.name)); its cookie is refused from now on") }
            }
        } catch let error as PairingError {
            printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// The pairing URLs and, on a terminal, the first one's QR code.
    static func showPairing(code: String, host: String, port: Int) {
        let urls = PairingAddresses.urls(hosts: PairingAddresses.hosts(listeningOn: host), port: port, code: code)
        let minutes = Int(PairingBook.codeLifetime / 60)
        say("rig serve: to pair a phone, scan the QR code or open (code \(PairingBook.shown(code)), once, for \(minutes) minutes):")
        for url in urls { say("  \(url)") }
        if isatty(STDOUT_FILENO) != 0, let first = urls.first, let qr = try? QRCode(first) {
            StandardStreams.out(qr.terminalText())
        }
    }

    private static func shown(_ date: Date) -> String {
        LocalTime(date.timeIntervalSince1970)?.iso ?? UTCTime.isoSeconds(date.timeIntervalSince1970)
    }

    /// The rig as `--no-shoot` serves it: no camera, so no step holds for a shot.
    static func withoutCamera(_ rig: Rig) -> Rig {
        var copy = rig
        copy.camera = nil
        return copy
    }
}

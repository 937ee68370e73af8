import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDFMocoServer
import RigDevices
import RigRuntime

/// `rig serve dfmoco`: the rig as a DFMoco motion-control device for Dragonframe.
struct ServeDFMocoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dfmoco",
        abstract: "Be a Dragonframe motion-control rig (DFMoco over TCP or a serial line).",
        discussion: """
            Motors are the rig's axes in file order, or as its "dfmoco" key lists them; \
            positions are integer steps (stepsPerDegree, default 100). Targets beyond the soft \
            limits are clamped, speeds never exceed maxVelocity. One client at a time; a client \
            that disconnects leaves the rig braking to a stop. Ctrl-C or SIGTERM brakes, parks \
            and leaves the output in its safe state. See docs/dragonframe.md.
            """
    )

    @Option(help: "The rig file.")
    var rig: String

    @Option(help: ArgumentHelp("Listen for Dragonframe's \"DFMoco / TCP\" connection here (default 127.0.0.1:10001).", valueName: "host:port"))
    var listen: String?

    @Option(help: ArgumentHelp("Serve on this serial device at 57600 8N1 instead (/dev/ttyGS0 in USB gadget mode, /dev/ttyUSB0).", valueName: "device"))
    var serial: String?

    @OptionGroup var runOptions: SessionRunOptions

    @OptionGroup var log: LogOptions

    func validate() throws {
        if listen != nil, serial != nil { throw ValidationError("--listen and --serial exclude each other: serve on one of them") }
        if let listen, DFMocoEndpoint.parseListen(listen) == nil {
            throw ValidationError("--listen \(listen): write HOST:PORT, such as 127.0.0.1:10001 or 0.0.0.0:10001")
        }
    }

    func run() throws {
        let model = try FileLoading.loadRig(rig)
        let logger = log.bootstrap(label: "rig.dfmoco")
        let endpoint: DFMocoEndpoint =
            serial.map { .serial(path: $0) }
            ?? listen.flatMap(DFMocoEndpoint.parseListen) ?? .tcp(host: "127.0.0.1", port: 10001)
        let options = try SessionSetup.options(runOptions, loop: LoopOptions(), inputs: [rig], rig: model)
        let setup = try SessionSetup.open(model, logger: logger)
        let output = setup.output
        let service: DFMocoService
        do {
            service = try DFMocoService(
                rig: model, output: output, startPose: setup.start.pose, endpoint: endpoint, options: options,
                version: RigVersion.release, logger: logger)
        } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        let place =
            service.port.map { port -> String in
                if case .tcp(let host, _) = endpoint { return "tcp \(host):\(port)" }
                return endpoint.description
            } ?? endpoint.description
        logger.notice("dfmoco: serving rig \"\(model.name)\" on \(place) (\(output.label)); motors \(service.server.motorSummary)")
        let summary: SessionSummary
        do throws(SessionError) {
            summary = try service.run()
        } catch {
            throw SessionSetup.refused(error)
        }
        try SessionSetup.end(summary)
    }
}

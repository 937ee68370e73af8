import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigDevices
import RigFormat
import RigPCA9685
import RigRuntime

struct BenchPCA9685Command: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pca9685",
        abstract: "Count the I2C bytes rig's PCA9685 driver sends per frame, beside Adafruit's and the optimum.",
        discussion: """
            Plays PROGRAM (default: the synthetic pan/tilt program of `rig bench loop`) through \
            the motion engine, every step advanced at once, and writes every frame through the \
            real PCA9685 driver onto a counting bus with a register file behind it. Per frame it \
            reports the bytes (address + register + data) and write transactions rig sent; \
            beside them what Adafruit's CircuitPython driver sends when its user sets every servo \
            each frame (Tests/RigPCA9685Tests/adafruit_reference.py in the test venv), and the \
            fewest bytes any sequence of writes could use for the same register changes \
            (exhaustive search: a channel's changes in one transaction, at most 32 data bytes a \
            transaction). Bus time counts 9 clocks a byte and 2 for START and STOP. The chip's \
            initialisation and the periodic read-back are not counted. A program whose rig is \
            not a PCA9685 is driven as if it were one at 50 Hz.
            """
    )

    @Argument(help: ArgumentHelp("A program file (.json).", valueName: "program"))
    var program: String?

    @Flag(help: "Print the figures as JSON.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "The Python with adafruit-circuitpython-pca9685 (default: .build-venv/bin/python3 above the binary, else python3).", valueName: "path"))
    var python: String?

    @Flag(help: "Do not run Adafruit's driver (no Python needed).")
    var noAdafruit = false

    func run() throws {
        let loaded: Program
        if let program {
            loaded = try FileLoading.loadProgram(program)
        } else {
            do { loaded = try BenchProgram.parse(BenchProgram.swings(rateHz: 100, seconds: 20), file: "<bench program>") } catch {
                printError("error: the synthetic program is malformed (a bug in rig bench): \(error.description)")
                throw ExitCode(1)
            }
        }
        let rig = loaded.rig
        if let axis = rig.axes.first(where: { !(0..<PCA9685Register.channelCount).contains($0.channel) }) {
            printError("error: axis \"\(axis.name)\" is on channel \(axis.channel); a PCA9685 has channels 0…15")
            throw ExitCode(2)
        }
        var config = PCA9685OutputConfig()
        if case .pca9685(let own)? = try? OutputDrivers.config(rig) { config = own }

        let measured: PCA9685Traffic
        do { measured = try PCA9685Traffic.measure(rig: rig, motion: loaded.motion, config: config) } catch {
            printError("error: \(error)")
            throw ExitCode(1)
        }
        var adafruit: [[Int]]?
        if !noAdafruit {
            do {
                adafruit = try AdafruitReference.frames(
                    config: config, channels: rig.axes.map(\.channel),
                    pulses: measured.pulses, python: python)
            } catch {
                printError("error: \(error) (or pass --no-adafruit)")
                throw ExitCode(1)
            }
        }
        let report = PCA9685BenchReport(
            file: program ?? "<bench program>", rateHz: rig.loopRateHz, channels: rig.axes.count,
            pwmHz: config.frequencyHz, rig: measured.rig, optimum: measured.optimum, adafruit: adafruit)
        if json { print(report.json) } else { for line in report.table { print(line) } }
    }
}

/// What rig's driver sent, frame by frame, and the optimum for the same register changes.
struct PCA9685Traffic {
    /// [bytes, transactions] per frame.
    var rig: [[Int]] = []
    var optimum: [[Int]] = []
    /// The pulse each channel showed per frame, in µs (nil: off), for Adafruit's run.
    var pulses: [[Double?]] = []

    static func measure(rig: Rig, motion: Motion, config: PCA9685OutputConfig, maxTicks: Int = 10_000_000) throws -> PCA9685Traffic {
        let bus = CountingI2CBus()
        let output = PCA9685Output(
            config: config, bus: bus, stateDirectory: nil, logger: Logger(label: "rig.bench"),
            clock: ManualClock(), healthCheckInterval: .seconds(1 << 40))
        let start = rig.homePose
        try output.start(
            channels: rig.axes.map(OutputChannel.init),
            initial: rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) })
        var player = Player(rig: rig, motion: motion, startPose: start)
        var frame = start
        var commands = rig.axes.indices.map { rig.axes[$0].command(forPosition: start[$0]) }
        var sent = [Double](repeating: 0, count: rig.axes.count)
        var traffic = PCA9685Traffic()
        let ledBase = Int(PCA9685Register.ledOnL(channel: 0))
        let ledCount = 4 * PCA9685Register.channelCount
        var ticks = 0
        while !player.isFinished, ticks < maxTicks {
            if case .ready = player.tick(into: &frame) { player.advance() }
            ticks += 1
            for i in rig.axes.indices { commands[i] = rig.axes[i].command(forPosition: frame[i]) }
            let before = Array(bus.registers[ledBase..<(ledBase + ledCount)])
            let bytes = bus.writeBytes
            let transactions = bus.writeTransactions
            try output.write(commands, sent: &sent)
            let changed = (0..<ledCount).map { bus.registers[ledBase + $0] != before[$0] }
            let best = PCA9685WriteOptimum.fewestBytes(changed: changed)
            traffic.rig.append([bus.writeBytes - bytes, bus.writeTransactions - transactions])
            traffic.optimum.append([best.bytes, best.transactions])
            traffic.pulses.append(sent.indices.map { i in commands[i] == .off ? nil : sent[i] })
        }
        output.shutdown(safe: rig.axes.indices.map { rig.axes[$0].safeCommand(lastPosition: frame[$0]) })
        return traffic
    }
}

/// Runs Adafruit's driver on the same pulses (`adafruit_reference.py frames`).
enum AdafruitReference {
    static func frames(config: PCA9685OutputConfig, channels: [Int], pulses: [[Double?]], python: String?) throws(BenchError) -> [[Int]] {
        let script = try locateBenchmarkFile("../Tests/RigPCA9685Tests/adafruit_reference.py", explicit: nil, option: "--python")
        let interpreter = python ?? (try? locateBenchmarkFile("../.build-venv/bin/python3", explicit: nil, option: "--python")) ?? "python3"
        let rows = pulses.map { "[" + $0.map { $0.map { number($0) } ?? "null" }.joined(separator: ",") + "]" }.joined(separator: ",")
        let request =
            "{\"frequencyHz\": \(number(config.frequencyHz)), \"oscillatorHz\": \(number(config.oscillatorHz)), "
            + "\"channels\": [\(channels.map(String.init).joined(separator: ","))], \"frames\": [\(rows)]}"
        let data = try childOutput(
            "/usr/bin/env", [interpreter, script, "frames"], input: Array(request.utf8),
            hint: "; it needs adafruit-circuitpython-pca9685 (scripts/setup --test)")
        struct Answer: Decodable { var perFrame: [[Int]] }
        do { return try JSONDecoder().decode(Answer.self, from: Data(data)).perFrame } catch {
            throw BenchError("\(script) printed no figures rig understands: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
    }
}

/// The `rig bench pca9685` report.
struct PCA9685BenchReport {
    var file: String
    var rateHz: Double
    var channels: Int
    var pwmHz: Double
    var rig: [[Int]]
    var optimum: [[Int]]
    var adafruit: [[Int]]?

    /// Bus time of a frame in µs: 9 clocks a byte, START and STOP 2 per transaction.
    static func busMicroseconds(_ frame: [Int], kHz: Double) -> Double {
        Double(9 * frame[0] + 2 * frame[1]) / kHz * 1_000
    }

    struct Summary {
        var bytesTotal = 0, bytesMax = 0, transactionsTotal = 0, transactionsMax = 0
        var bytesMean = 0.0, bus100Mean = 0.0, bus100Max = 0.0, bus400Mean = 0.0, bus400Max = 0.0

        init(_ frames: [[Int]]) {
            for f in frames {
                bytesTotal += f[0]
                transactionsTotal += f[1]
                bytesMax = max(bytesMax, f[0])
                transactionsMax = max(transactionsMax, f[1])
                bus100Max = max(bus100Max, PCA9685BenchReport.busMicroseconds(f, kHz: 100))
                bus400Max = max(bus400Max, PCA9685BenchReport.busMicroseconds(f, kHz: 400))
            }
            let n = Double(max(frames.count, 1))
            bytesMean = Double(bytesTotal) / n
            bus100Mean = Double(9 * bytesTotal + 2 * transactionsTotal) / 100 * 1_000 / n
            bus400Mean = Double(9 * bytesTotal + 2 * transactionsTotal) / 400 * 1_000 / n
        }

        var json: String {
            "{\"bytes_total\": \(bytesTotal), \"bytes_per_frame_mean\": \(number(bytesMean)), \"bytes_per_frame_max\": \(bytesMax), "
                + "\"transactions_total\": \(transactionsTotal), \"transactions_per_frame_max\": \(transactionsMax), "
                + "\"bus_us_per_frame\": {\"100khz_mean\": \(number(bus100Mean)), \"100khz_max\": \(number(bus100Max)), "
                + "\"400khz_mean\": \(number(bus400Mean)), \"400khz_max\": \(number(bus400Max))}}"
        }
    }

    /// Frames where rig sent more bytes than the optimum.
    var framesAboveOptimum: Int { zip(rig, optimum).filter { $0[0] > $1[0] }.count }

    var json: String {
        var text =
            "{\"program\": \"\(file)\", \"frames\": \(rig.count), \"rate_hz\": \(number(rateHz)), \"channels\": \(channels), "
            + "\"pwm_hz\": \(number(pwmHz)), \"rig\": \(Summary(rig).json), \"optimum\": \(Summary(optimum).json)"
        if let adafruit { text += ", \"adafruit\": \(Summary(adafruit).json)" }
        text += ", \"frames_above_optimum\": \(framesAboveOptimum), \"per_frame\": ["
        text += rig.indices.map { k in
            let a = adafruit.map { ", \($0[k][0]), \($0[k][1])" } ?? ""
            return "[\(rig[k][0]), \(rig[k][1]), \(optimum[k][0]), \(optimum[k][1])\(a)]"
        }.joined(separator: ", ")
        return text + "], \"per_frame_columns\": [\"rig_bytes\", \"rig_transactions\", \"optimum_bytes\", \"optimum_transactions\""
            + (adafruit == nil ? "" : ", \"adafruit_bytes\", \"adafruit_transactions\"") + "]}"
    }

    var table: [String] {
        var rows = [["", "bytes", "bytes/frame mean", "max", "transactions", "max/frame", "bus µs/frame 100 kHz mean", "max", "400 kHz mean", "max"]]
        func row(_ name: String, _ s: Summary) {
            rows.append([
                name, String(s.bytesTotal), fixed(s.bytesMean, 2), String(s.bytesMax), String(s.transactionsTotal),
                String(s.transactionsMax), fixed(s.bus100Mean, 0), fixed(s.bus100Max, 0),
                fixed(s.bus400Mean, 0), fixed(s.bus400Max, 0),
            ])
        }
        row("rig", Summary(rig))
        row("optimum", Summary(optimum))
        if let adafruit { row("adafruit", Summary(adafruit)) }
        let widths = rows[0].indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        var lines = [
            "rig bench pca9685: \(file), \(rig.count) frames at \(format(rateHz)) Hz, \(channels) channel\(channels == 1 ? "" : "s"), PWM \(format(pwmHz)) Hz",
            "",
        ]
        lines += rows.map { cells in
            cells.indices.map { c in
                let pad = String(repeating: " ", count: widths[c] - cells[c].count)
                return c == 0 ? cells[c] + pad : pad + cells[c]
            }.joined(separator: "  ")
        }
        lines.append("")
        lines.append("frames where rig sent more bytes than the optimum: \(framesAboveOptimum) of \(rig.count)")
        return lines
    }
}

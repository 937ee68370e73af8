import ArgumentParser
import FoundationEssentials
import Glibc
import RigCore

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check this machine for a rig: buses, devices, Bluetooth, GPIO, real-time limits, directories, the clock.",
        discussion: """
            One line per check: ok, warning or problem, with the fix. Reads the PCA9685's MODE1 and \
            PRE_SCALE, looks at GPIO lines without taking them, asks BlueZ (and scans briefly for a \
            BLEControl board); never moves anything. Exit 0 when nothing is a problem (warnings \
            allowed), 1 when something is, 2 when the rig file is malformed.
            """
    )

    @Option(help: ArgumentHelp("The rig file (default: /etc/rig/rig.json when it exists).", valueName: "rig.json"))
    var rig: String?

    @Option(name: .customLong("program"), help: ArgumentHelp("A program to check against the rig too (repeatable).", valueName: "program.json"))
    var programs: [String] = []

    @Option(help: ArgumentHelp("Seconds to scan for a BLEControl board (0: no scan).", valueName: "seconds"))
    var scanSeconds = 4.0

    @Flag(help: "Print the findings as a JSON array of {check, status, message, fix}.")
    var json = false

    func validate() throws {
        guard scanSeconds >= 0, scanSeconds <= 60 else { throw ValidationError("--scan-seconds: valid: 0…60") }
    }

    func run() throws {
        let path = rig ?? "/etc/rig/rig.json"
        guard rig != nil || FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("give --rig FILE (there is no /etc/rig/rig.json)")
        }
        let model = try FileLoading.loadRig(path)
        let findings = Doctor.run(rig: model, rigPath: path, programs: programs, scanSeconds: scanSeconds)
        if json {
            print("[" + findings.map(\.json).joined(separator: ",\n ") + "]")
        } else {
            for finding in findings { print(finding.line) }
            let problems = findings.filter { $0.level == .problem }.count
            let warnings = findings.filter { $0.level == .warning }.count
            print(
                problems == 0
                    ? "doctor: ready (\(warnings) warning\(warnings == 1 ? "" : "s"))"
                    : "doctor: \(problems) problem\(problems == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if findings.contains(where: { $0.level == .problem }) { throw ExitCode(1) }
    }
}

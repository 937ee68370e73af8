import Foundation
import RigTestSupport
import Testing

/// The real binary against files that are not what they claim: devices, directories,
/// FIFOs, bad bytes, odd line endings, a program naming itself as its rig, absurd numbers
/// on the command line. One short line each, exit 2, and never a hang.
@Suite struct HostileInputTests {
    /// A started `rig` and its output, read to the end on threads of their own.
    final class Watched: @unchecked Sendable {
        let process: TestProcess
        let out: PipeCollector, err: PipeCollector

        init(_ arguments: [String]) throws {
            let (process, outPipe, errPipe) = try RigProcess.start(arguments)
            self.process = process
            out = PipeCollector(outPipe)
            err = PipeCollector(errPipe)
        }

        var finished: Bool { !process.isRunning && out.ended && err.ended }
    }

    /// Runs `rig` and fails (and kills it) if it has not exited within `limit`: a read
    /// that blocks (a FIFO, /dev/zero) must show up as a failure, not a hung test run.
    static func runWithWatchdog(_ arguments: [String], limit: Duration = .seconds(60)) async throws -> RigProcess.Result {
        let watched = try Watched(arguments)
        do {
            _ = try await poll(every: .milliseconds(20), for: limit) { watched.finished ? true : nil }
        } catch {
            watched.process.terminate()
            throw error
        }
        return RigProcess.Result(
            status: watched.process.terminationStatus, stdout: watched.out.text,
            stderr: watched.err.text)
    }

    @Test func nonRegularFilesGetTheirOwnMessage() async throws {
        let fifo = try RigProcess.temporaryFile("pipe.json")
        #expect(mkfifo(fifo, 0o600) == 0)
        let dir = (fifo as NSString).deletingLastPathComponent
        let cases = [
            ("/dev/zero", "is a device, not a regular file; rig and program files must be regular files"),
            (dir, "is a directory, not a rig or program file"),
            (fifo, "is a FIFO (named pipe), not a regular file; rig and program files must be regular files"),
            (dir + "/missing.json", "no such file"),
        ]
        for command in ["check", "plan", "plot"] {
            for (path, message) in cases {
                let extra = command == "plot" ? ["-o", dir + "/out.svg"] : []
                let result = try await Self.runWithWatchdog([command, path] + extra)
                #expect(result.status == 2, "\(command) \(path)")
                #expect(result.stderr == "\(path):1:1: error: $: \(message)\n", "\(command) \(path)")
            }
        }
    }

    /// A generated program of a million keyframes is 55 MB and must be checked; one byte
    /// past 64 MB is refused by its size before anything is read (a sparse file: no disk).
    @Test func aFileOverTheSizeBoundIsRefusedBeforeReading() async throws {
        let big = try RigProcess.temporaryFile("big.json", contents: "")
        #expect(truncate(big, off_t(64 << 20) + 1) == 0)
        for command in ["check", "plan"] {
            let result = try await Self.runWithWatchdog([command, big])
            #expect(result.status == 2, "\(command)")
            #expect(
                result.stderr
                    == "\(big):1:1: error: $: the file is 67108865 bytes; valid: at most 67108864 bytes for a rig or program file\n",
                "\(command)")
        }
    }

    @Test func badBytesAndLineEndingsAreLocated() async throws {
        var bytes = Array("{\n  \"axes\": [{\"name\": \"p".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("n\", \"channel\": 0}]\n}\n".utf8)
        let utf8 = try RigProcess.temporaryFile("utf8.json")
        try Data(bytes).write(to: URL(fileURLWithPath: utf8))
        let cr = try RigProcess.temporaryFile("cr.json", contents: "{\r  \"axes\": [\r    {\"name\": \"pan\", \"channel\": 0, \"maxVelocity\": 0}\r  ]\r}\r")
        let utf8Result = try await Self.runWithWatchdog(["check", utf8])
        #expect(utf8Result.status == 2)
        #expect(utf8Result.stderr == "\(utf8):2:23: error: $: invalid UTF-8 (byte 0xC3); rig and program files must be UTF-8 text\n")
        let crResult = try await Self.runWithWatchdog(["check", cr])
        #expect(crResult.status == 2)
        #expect(crResult.stderr == "\(cr):3:50: error: $.axes[0].maxVelocity: 0 °/s is out of range; valid: 0.1…10000 °/s\n")
    }

    @Test func aProgramNamingItselfAsItsRigIsTold() async throws {
        let program = try RigProcess.temporaryFile(
            "self.json", contents: #"{"rig": "self.json", "kind": "keyframes", "keyframes": {"pan": [{"t": 0, "value": 0}]}}"#)
        let result = try await Self.runWithWatchdog(["check", program])
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "\(program):1:9: error: $.rig: \"self.json\" is this program file itself; \"rig\" must name a rig file (with \"axes\") or be a rig object\n")
    }

    /// A program longer than the work bound is refused before any simulation, by every
    /// command that would simulate it: exit 2, and "feasible" is never printed.
    @Test func aProgramOverTheWorkBoundIsRefusedUpFront() async throws {
        let steps = (0..<60).map { #"{"pose": {"pan": \#($0 % 2 == 0 ? -90 : 90)}}"# }.joined(separator: ", ")
        let program = try RigProcess.temporaryFile(
            "long.json",
            contents: """
                {"rig": {"axes": [{"name": "pan", "channel": 0, "maxVelocity": 0.1}]}, "kind": "steps", "steps": [\(steps)]}
                """)
        for arguments in [["check", program], ["plan", program], ["play", "--dry-run", program]] {
            let result = try await Self.runWithWatchdog(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("\(program):1:1: error: $: the program moves for about "), "\(result.stderr)")
            #expect(result.stderr.contains(" ticks at 100 Hz); valid: at most 10000000 ticks (100000 s at 100 Hz)"), "\(result.stderr)")
            #expect(!result.stdout.contains("feasible"))
        }
    }

    @Test func commandLineNumbersGetTheirRange() async throws {
        let program = RigProcess.packageRoot.appendingPathComponent("rigs/move.json").path
        for (arguments, message) in [
            (["play", "--dry-run", "--speed", "-1", program], "--speed -1 is out of range; valid: 0.01…1000"),
            (["play", "--dry-run", "--speed", "1e-300", program], "--speed 1e-300 is out of range; valid: 0.01…1000"),
            (
                ["play", "--dry-run", "--trigger", "interval:1e300", program],
                "--trigger: interval 1e+300 s is out of range; valid: interval:SECONDS with SECONDS in 0.01…86400"
            ),
        ] {
            let result = try await Self.runWithWatchdog(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: \(message)\n"), "\(result.stderr)")
        }
    }
}

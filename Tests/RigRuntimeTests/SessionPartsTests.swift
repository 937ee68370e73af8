import Foundation
import Glibc
import RigCore
@testable import RigRuntime
import Testing

private func temporaryDirectory() throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rig-session-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

@Suite struct HardwareLockTests {
    @Test func aHeldLockRefusesASecondHolderNamingTheFirstAndIsFreeAfterRelease() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try HardwareLock.acquire(["pca9685-i2c-1-0x40", "gpio-gpiochip0-13"], directory: dir)
        // flock locks belong to an open file: a second open in this process conflicts like another process.
        #expect(throws: HardwareLockError.self) { try HardwareLock.acquire(["gpio-gpiochip0-13"], directory: dir) }
        do {
            _ = try HardwareLock.acquire(["pca9685-i2c-1-0x40"], directory: dir)
            Issue.record("the second acquire succeeded")
        } catch {
            #expect(error.holderPID == getpid())
            #expect(error.holderCommand == CommandLine.arguments.joined(separator: " "))
            #expect(error.description.contains("pca9685-i2c-1-0x40 is in use by process \(getpid())"))
        }
        // Another resource is free.
        let other = try HardwareLock.acquire(["pca9685-i2c-1-0x41"], directory: dir)
        other.release()
        first.release()
        let again = try HardwareLock.acquire(["pca9685-i2c-1-0x40", "gpio-gpiochip0-13"], directory: dir)
        again.release()
    }

    @Test func allOrNothing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let held = try HardwareLock.acquire(["b"], directory: dir)
        #expect(throws: HardwareLockError.self) { try HardwareLock.acquire(["a", "b"], directory: dir) }
        // "a" was let go when "b" failed.
        let a = try HardwareLock.acquire(["a"], directory: dir)
        a.release()
        held.release()
    }

    @Test func lockFileNamesAreSafe() {
        #expect(HardwareLock.fileName("blecontrol-hci0-AA:BB:CC/../x") == "blecontrol-hci0-AA_BB_CC_.._x.lock")
    }
}

@Suite struct OutputPathTests {
    @Test func refusesWhatWouldBlockOrDestroyAndAcceptsANewFile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let input = dir + "/program.json"
        try "{}".write(toFile: input, atomically: true, encoding: .utf8)

        func problem(_ path: String, inputs: [String] = [], mustNotExist: Bool = false) -> String? {
            do {
                try OutputPath.check(path, option: "--trace", inputs: inputs, mustNotExist: mustNotExist)
                return nil
            } catch {
                #expect(error.description.hasPrefix("--trace \(path): "))
                return error.problem
            }
        }
        #expect(problem(fifo)?.contains("FIFO") == true)
        #expect(problem(dir)?.contains("directory") == true)
        #expect(problem("/dev/null")?.contains("not a regular file") == true)
        #expect(problem(dir + "/missing/x.csv")?.contains("does not exist") == true)
        #expect(problem("")?.contains("empty") == true)
        #expect(problem(dir + "/../" + (dir as NSString).lastPathComponent + "/program.json", inputs: [input])?.contains("input files") == true)
        #expect(problem(input, mustNotExist: true)?.contains("exists") == true)
        #expect(problem(input) == nil, "an existing regular file that is no input may be replaced")
        #expect(problem(dir + "/new.csv", inputs: [input]) == nil)
    }

    @Test func theTraceWriterRefusesAFIFOWithoutBlocking() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No reader: a blocking open would wait forever; non-blocking fails or is refused.
        #expect(throws: (any Error).self) { try TraceWriter(path: fifo, axes: [], pwmPeriodMicroseconds: 20_000) }
    }
}

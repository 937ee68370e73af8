import Foundation
import RigCore
import RigRuntime
import RigTestSupport
import Synchronization
import Testing

@testable import RigStepSync

/// The camera's contacts as a fake line source: the real shot sequence on lines a test
/// reads back (the real kernel's lines are the HIL tier's).
final class FakeCameraLines: CameraLines, @unchecked Sendable {
    enum Change: Equatable {
        case focus(Bool)
        case shutter(Bool)
        case closed
    }
    let changes = Mutex<[Change]>([])
    let failShutter = Atomic<Bool>(false)
    func setFocus(_ closed: Bool) throws { changes.withLock { $0.append(.focus(closed)) } }
    func setShutter(_ closed: Bool) throws {
        if failShutter.load(ordering: .relaxed) { throw CameraError("shutter line: I/O error") }
        changes.withLock { $0.append(.shutter(closed)) }
    }
    func close() { changes.withLock { $0.append(.closed) } }
    var log: [Change] { changes.withLock { $0 } }
}

final class Results: @unchecked Sendable {
    let values = Mutex<[Result<ShotReport, CameraError>]>([])
    func add(_ r: Result<ShotReport, CameraError>) { values.withLock { $0.append(r) } }
    var count: Int { values.withLock { $0.count } }
    var failures: [String] { values.withLock { $0.compactMap { if case .failure(let e) = $0 { e.description } else { nil } } } }
}

@Suite struct GPIOCameraTests {
    let quick = ShotTiming(focusSeconds: 0.001, shutterHoldSeconds: 0.001, exposureWindowSeconds: 0.002, afterShotSeconds: 0, shotsPerStep: 1)

    @Test func aShotIsFocusThenShutterThenReleaseInThatOrder() async throws {
        let lines = FakeCameraLines()
        let camera = GPIOCamera(config: GPIOCameraConfig(), lines: lines)
        let results = Results()
        camera.shoot(ShotRequest(timing: quick)) { results.add($0) }
        camera.shoot(ShotRequest(timing: quick)) { results.add($0) }
        _ = try await poll { results.count == 2 ? true : nil }
        let one: [FakeCameraLines.Change] = [.focus(true), .shutter(true), .shutter(false), .focus(false)]
        #expect(lines.log == one + one, "shots run one after the other, never overlapping")
        #expect(results.failures.isEmpty)
        camera.close()
        #expect(lines.log.last == .closed)
        // A closed camera takes no shot.
        camera.shoot(ShotRequest(timing: quick)) { results.add($0) }
        _ = try await poll { results.count == 3 ? true : nil }
        #expect(results.failures.count == 1)
        #expect(lines.log.filter { $0 == .shutter(true) }.count == 2)
    }

    @Test func closingMidExposureOpensTheContactsAtOnceAndReportsNoShot() async throws {
        let lines = FakeCameraLines()
        let camera = GPIOCamera(config: GPIOCameraConfig(), lines: lines)
        let bulb = ShotTiming(focusSeconds: 0, shutterHoldSeconds: 600, exposureWindowSeconds: 600, afterShotSeconds: 0, shotsPerStep: 1)
        let results = Results()
        camera.shoot(ShotRequest(timing: bulb)) { results.add($0) }
        _ = try await poll { lines.log.contains(.shutter(true)) ? true : nil }
        camera.close()
        // The 600 s exposure ended now: the lines were released and the shot reported as cut short.
        _ = try await poll { results.count == 1 ? true : nil }
        #expect(lines.log.last == .closed)
        #expect(!lines.log.contains(.shutter(false)) || lines.log.firstIndex(of: .shutter(false))! < lines.log.firstIndex(of: .closed)!)
        #expect(results.failures.first?.contains("closed mid-shot") == true)
    }

    @Test func aLineThatFailsOpensTheOtherContactAndReportsTheError() async throws {
        let lines = FakeCameraLines()
        lines.failShutter.store(true, ordering: .relaxed)
        let camera = GPIOCamera(config: GPIOCameraConfig(), lines: lines)
        let results = Results()
        camera.shoot(ShotRequest(timing: quick)) { results.add($0) }
        _ = try await poll { results.count == 1 ? true : nil }
        #expect(results.failures == ["shutter line: I/O error"])
        #expect(lines.log == [.focus(true), .focus(false)], "focus released after the shutter line failed")
        camera.close()
    }
}

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
    /// When each change was made, UTC ns on the wall clock.
    let times = Mutex<[Int64]>([])
    let failShutter = Atomic<Bool>(false)
    func setFocus(_ closed: Bool) throws { record(.focus(closed)) }
    func setShutter(_ closed: Bool) throws {
        if failShutter.load(ordering: .relaxed) { throw CameraError("shutter line: I/O error") }
        record(.shutter(closed))
    }
    private func record(_ change: Change) {
        changes.withLock { $0.append(change) }
        times.withLock { $0.append(WallClock.nanoseconds()) }
    }
    func time(of change: Change) -> Int64? {
        guard let i = log.firstIndex(of: change) else { return nil }
        return times.withLock { $0[i] }
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

    /// A group's shot: the shutter closes at the group's time on the wall clock (never
    /// before it), the focus no earlier than its time before that, and the report carries
    /// the edge the camera measured as it closed the contact.
    @Test func aShotAtAGroupsTimeClosesTheShutterThenAndReportsItsEdge() async throws {
        let lines = FakeCameraLines()
        let camera = GPIOCamera(config: GPIOCameraConfig(), lines: lines)
        #expect(camera.firesAtTime)
        let timing = ShotTiming(focusSeconds: 0.2, shutterHoldSeconds: 0.01, exposureWindowSeconds: 0.02, afterShotSeconds: 0, shotsPerStep: 1)
        let atNs = WallClock.nanoseconds() + 400_000_000
        var request = ShotRequest(timing: timing)
        request.shutterAtNs = atNs
        let results = Results()
        let asked = WallClock.nanoseconds()
        camera.shoot(request) { results.add($0) }
        _ = try await poll { results.count == 1 ? true : nil }
        let report = try #require(try? results.values.withLock { $0[0] }.get())
        let focus = try #require(lines.time(of: .focus(true)))
        let shutter = try #require(lines.time(of: .shutter(true)))
        let edge = try #require(report.edgeNs)
        #expect(shutter >= atNs, "the shutter never closes before the group's time")
        #expect(focus >= atNs - 200_000_000 && focus >= asked, "the focus waits until its time before the shot")
        #expect(focus <= shutter && edge >= shutter, "the edge is measured as the contact closed")
        #expect(lines.log == [.focus(true), .shutter(true), .shutter(false), .focus(false)])
        camera.close()
    }

    /// Closed while it waits for the group's time: no contact ever closes.
    @Test func closingBeforeAGroupsTimeTakesNoShot() async throws {
        let lines = FakeCameraLines()
        let camera = GPIOCamera(config: GPIOCameraConfig(), lines: lines)
        var request = ShotRequest(timing: quick)
        request.shutterAtNs = WallClock.nanoseconds() + 600_000_000_000
        let results = Results()
        camera.shoot(request) { results.add($0) }
        camera.close()
        _ = try await poll { results.count == 1 ? true : nil }
        #expect(results.failures.first?.contains("closed mid-shot") == true)
        #expect(!lines.log.contains(.shutter(true)) && !lines.log.contains(.focus(true)))
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

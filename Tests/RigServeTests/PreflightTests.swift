import RigRuntime
import Testing

@testable import RigServe

/// The preflight's findings from what the camera and the machine said (`Preflight.make`);
/// the real camera's side (libgphoto2's storage information) is in ServeGPhoto2Tests.
@Suite struct PreflightTests {
    static func camera(
        freeImages: Int? = 500, freeKiB: Int? = 10_000_000, battery: String? = "80%", downloadFreeKiB: Int? = nil, onCard: Bool = true
    ) -> Preflight.Camera {
        var c = Preflight.Camera(label: "gphoto2 D750")
        c.storage = [CameraStorage(label: "SD", capacityKiB: 32_000_000, freeKiB: freeKiB, freeImages: freeImages)]
        c.battery = battery
        c.keepsFramesOnCard = onCard
        if let downloadFreeKiB {
            c.downloadFolder = "/srv/frames"
            c.downloadFreeBytes = UInt64(downloadFreeKiB) * 1024
        }
        return c
    }

    static func finding(_ preflight: Preflight, _ topic: String) -> Preflight.Finding? { preflight.findings.first { $0.topic == topic } }

    @Test func aCardThatHoldsTheFramesIsOkAndOneThatDoesNotIsAWarningWithBothNumbers() {
        let fits = Preflight.make(program: "p.json", frames: 300, seconds: 600, start: 0, camera: Self.camera())
        #expect(Self.finding(fits, "card")?.level == .ok)
        #expect(fits.findings.allSatisfy { $0.level == .ok })
        let short = Preflight.make(program: "p.json", frames: 501, seconds: 600, start: 0, camera: Self.camera())
        let card = Self.finding(short, "card")
        #expect(card?.level == .warning)
        #expect(card?.text.contains("about 500 more frames; this shoot takes 501") == true, "\(card?.text ?? "")")
    }

    @Test func framesKeptInTheCamerasMemoryDoNotNeedTheCard() {
        let ram = Preflight.make(program: "p.json", frames: 5000, seconds: 600, start: 0, camera: Self.camera(freeImages: 10, onCard: false))
        #expect(Self.finding(ram, "card")?.level == .ok)
    }

    /// The disk the frames are copied to, against the frames at the camera's own size per
    /// frame (its free space over the frames it says fit: 20,000 KiB here).
    @Test func theDownloadDiskIsWeighedAtTheCamerasSizePerFrame() {
        let camera = { (free: Int) in Self.camera(freeImages: 500, freeKiB: 10_000_000, downloadFreeKiB: free) }
        let enough = Preflight.make(program: "p.json", frames: 100, seconds: 60, start: 0, camera: camera(2_000_000))
        #expect(Self.finding(enough, "disk")?.level == .ok)
        #expect(enough.downloadFreeKiB == 2_000_000)
        let tight = Preflight.make(program: "p.json", frames: 101, seconds: 60, start: 0, camera: camera(2_000_000))
        #expect(Self.finding(tight, "disk")?.level == .warning, "\(tight.findings)")
        #expect(Self.finding(tight, "disk")?.text.hasPrefix("/srv/frames has 2.0 GB free; the frames need about 2.1 GB") == true)
    }

    @Test func aLowBatteryIsAWarningAndAnUnknownOneSaysNothing() {
        #expect(Self.finding(Preflight.make(program: "p", frames: 1, seconds: 1, start: 0, camera: Self.camera(battery: "19%")), "battery")?.level == .warning)
        #expect(Self.finding(Preflight.make(program: "p", frames: 1, seconds: 1, start: 0, camera: Self.camera(battery: "20%")), "battery")?.level == .ok)
        #expect(Self.finding(Preflight.make(program: "p", frames: 1, seconds: 1, start: 0, camera: Self.camera(battery: "Full")), "battery")?.level == .ok)
        #expect(Self.finding(Preflight.make(program: "p", frames: 1, seconds: 1, start: 0, camera: Self.camera(battery: nil)), "battery") == nil)
    }

    @Test func aMissingCameraAndNoCameraAreSaid() {
        var missing = Preflight.Camera(label: "gphoto2")
        missing.problem = "no camera found"
        let absent = Preflight.make(program: "p", frames: 10, seconds: 1, start: 0, camera: missing)
        #expect(Self.finding(absent, "camera")?.level == .warning)
        #expect(Self.finding(absent, "camera")?.text.contains("no camera found") == true)
        let none = Preflight.make(program: "p", frames: 0, seconds: 1, start: 0, camera: nil)
        #expect(none.findings.map(\.topic) == ["time", "camera"])
        #expect(Self.finding(none, "camera")?.text.contains("nothing is shot") == true)
    }

    @Test func theEndIsTheStartPlusTheTimeAndAManualProgramHasNone() {
        let paced = Preflight.make(program: "p", frames: 0, seconds: 3600, start: 1_780_000_000, camera: nil)
        #expect(paced.endsAt == "2026-05-28T21:26:40Z")
        #expect(Self.finding(paced, "time")?.text == "takes about 1 h 00 min")
        let manual = Preflight.make(program: "p", frames: 0, seconds: nil, start: 0, camera: nil)
        #expect(manual.endsAt == nil)
        #expect(Self.finding(manual, "time")?.text.contains("waits for you") == true)
    }
}

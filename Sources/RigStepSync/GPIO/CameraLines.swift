import FoundationEssentials
import Glibc
import RigCore
import RigRuntime

/// The camera's two contacts as output lines: libgpiod on a real chip, or a fake in tests.
/// Values are logical: true = contact closed (active-low handled below this).
public protocol CameraLines: AnyObject {
    func setFocus(_ closed: Bool) throws
    func setShutter(_ closed: Bool) throws
    /// Opens both contacts and gives the lines back to the kernel.
    func close()
}

/// The camera lines on a GPIO chip (through `Libgpiod`): both requested as outputs at
/// their inactive value (contacts open) with the active-low flag when the wiring needs it.
/// The kernel releases them when the process exits, kill -9 included; a released line goes
/// back to input, and the optocoupler (and so the contact) opens.
public final class LibgpiodCameraLines: CameraLines {
    private let shutter: Libgpiod.OutputLine
    private let focus: Libgpiod.OutputLine?
    private var closed = false

    public init(config: GPIOCameraConfig, consumer: String = "rig-camera") throws {
        do {
            let chip = try Libgpiod.Chip(config.chip)
            // A line requested before a failure is given back as it goes.
            shutter = try chip.output(config.shutterLine, consumer: consumer, activeLow: config.activeLow, what: "the camera's shutter")
            focus = try config.focusLine.map { line throws(Libgpiod.Failure) in
                try chip.output(line, consumer: consumer, activeLow: config.activeLow, what: "the camera's focus")
            }
        } catch {
            throw CameraError(error.description)
        }
    }

    public func setFocus(_ closed: Bool) throws {
        guard let focus else { return }
        try set(focus, closed, "focus")
    }

    public func setShutter(_ closed: Bool) throws {
        try set(shutter, closed, "shutter")
    }

    private func set(_ line: Libgpiod.OutputLine, _ value: Bool, _ what: String) throws {
        guard !closed else { throw CameraError("the camera lines are released") }
        do { try line.set(value) } catch { throw CameraError("setting the \(what) line failed: \(error)") }
    }

    public func close() {
        guard !closed else { return }
        try? shutter.set(false)
        try? focus?.set(false)
        closed = true
        shutter.release()
        focus?.release()
    }
}

import CGPIOD
import Foundation
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

/// The camera lines through libgpiod 1.6: both requested as outputs at their inactive
/// value (contacts open) with the active-low flag when the wiring needs it. The kernel
/// releases them when the process exits, kill -9 included; a released line goes back to
/// input, and the optocoupler (and so the contact) opens.
public final class LibgpiodCameraLines: CameraLines {
    private let chip: OpaquePointer
    private let shutter: OpaquePointer
    private let focus: OpaquePointer?
    private var closed = false

    public init(config: GPIOCameraConfig, consumer: String = "rig-camera") throws {
        guard let chip = gpiod_chip_open_lookup(config.chip) else {
            throw CameraError("no GPIO chip \"\(config.chip)\" (\(String(cString: strerror(errno))))")
        }
        let flags = config.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        func request(_ number: Int, _ what: String) throws -> OpaquePointer {
            guard let line = gpiod_chip_get_line(chip, UInt32(number)),
                gpiod_line_request_output_flags(line, consumer, flags, 0) == 0
            else {
                throw CameraError("cannot request line \(number) of \(config.chip) for the camera's \(what) (\(String(cString: strerror(errno))))")
            }
            return line
        }
        do {
            shutter = try request(config.shutterLine, "shutter")
        } catch {
            gpiod_chip_close(chip)
            throw error
        }
        do {
            focus = try config.focusLine.map { try request($0, "focus") }
        } catch {
            gpiod_line_release(shutter)
            gpiod_chip_close(chip)
            throw error
        }
        self.chip = chip
    }

    public func setFocus(_ closed: Bool) throws {
        guard let focus else { return }
        try set(focus, closed, "focus")
    }

    public func setShutter(_ closed: Bool) throws {
        try set(shutter, closed, "shutter")
    }

    private func set(_ line: OpaquePointer, _ value: Bool, _ what: String) throws {
        guard !closed else { throw CameraError("the camera lines are released") }
        guard gpiod_line_set_value(line, value ? 1 : 0) == 0 else {
            throw CameraError("setting the \(what) line failed (\(String(cString: strerror(errno))))")
        }
    }

    public func close() {
        guard !closed else { return }
        _ = gpiod_line_set_value(shutter, 0)
        if let focus { _ = gpiod_line_set_value(focus, 0) }
        closed = true
        gpiod_line_release(shutter)
        if let focus { gpiod_line_release(focus) }
        gpiod_chip_close(chip)
    }
}

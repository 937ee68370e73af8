import RigCore

/// Why a camera could not take a shot (a line that could not be driven, a closed camera).
public struct CameraError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A camera the rig fires: GPIO contacts (`GPIOCamera` in RigStepSync) or the simulated
/// one. The shot runner calls it from the session's event thread; it must not block
/// that thread for the length of a shot.
public protocol Camera: AnyObject, Sendable {
    /// For the live view and logs ("gpio gpiochip0 27/22", "sim").
    var label: String { get }
    /// True: the camera reports each shot's end (`done`), and the player holds until it
    /// does. False: the player ends the shot after its planned time (the simulator).
    var reportsShotDone: Bool { get }
    /// Takes one shot with `timing` (focus, shutter, exposure, release) off the caller's
    /// thread and calls `done` once the exposure is over and the contacts are open, or
    /// with the error that stopped it.
    func shoot(timing: ShotTiming, done: @escaping @Sendable (Result<Void, CameraError>) -> Void)
    /// Opens both contacts now and releases the hardware (every way out calls this; a
    /// shot under way is cut short and reports nothing). Idempotent.
    func close()
}

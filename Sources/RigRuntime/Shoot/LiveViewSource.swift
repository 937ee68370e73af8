import RigCore

/// A camera that shows what it sees: the gphoto2 camera (libgphoto2's `capture_preview`)
/// and the simulated one (its test scene drawn at the rig's pose). Its `liveView` runs
/// while someone watches: it starts when the first viewer joins and stops (the camera's
/// viewfinder released) when the last leaves or the run ends. A shot pauses it; it
/// resumes once the camera confirmed the shot.
public protocol LiveViewSource: AnyObject, Sendable {
    /// Where the frames go and viewers join.
    var liveView: LiveViewFeed { get }
    /// Where the rig points now, in the rig's axis order (the simulated camera draws its
    /// scene from there; a real camera sees for itself). The session gives it once the
    /// loop exists.
    func follow(pose: @escaping @Sendable () -> CameraPose?)
    /// The view's horizontal field of view when the camera knows it (the simulated one's
    /// lens); nil: the client says it (tap to aim).
    var liveViewFieldOfViewDegrees: Double? { get }
}

extension LiveViewSource {
    public func follow(pose: @escaping @Sendable () -> CameraPose?) {}
    public var liveViewFieldOfViewDegrees: Double? { nil }
}

/// Where the camera points, in the rig's axis order, and when it pointed there: the
/// simulator's modelled camera is stamped with the write that moved it, so a simulated
/// live view drawn while the loop is held up shows an old pose with its old time, never
/// with a new one (a still camera that was not).
public struct CameraPose: Sendable, Equatable, ExpressibleByArrayLiteral {
    public var angles: [Double]
    /// CLOCK_MONOTONIC ns of the moment it pointed there; nil: now.
    public var atNanoseconds: UInt64?

    public init(_ angles: [Double], atNanoseconds: UInt64? = nil) {
        self.angles = angles
        self.atNanoseconds = atNanoseconds
    }

    public init(arrayLiteral elements: Double...) { self.init(elements) }
}

/// One live-view frame: the camera's own JPEG bytes, stamped with its number and capture
/// time in a COM segment (`rig-frame N captured-ns T`), never re-encoded.
public struct LiveViewFrame: Sendable {
    /// 1, 2, 3… from the camera's first frame of the run.
    public var number: Int
    /// When it was captured, on CLOCK_MONOTONIC (ns): a reader on the same machine
    /// subtracts it from its own clock for the latency.
    public var capturedNanoseconds: UInt64
    public var jpeg: [UInt8]

    public init(number: Int, capturedNanoseconds: UInt64, jpeg: [UInt8]) {
        self.number = number
        self.capturedNanoseconds = capturedNanoseconds
        self.jpeg = jpeg
    }

    /// A frame from a camera's JPEG: stamped with its number and time, or nil when the
    /// bytes are not a JPEG.
    public static func stamped(_ jpeg: [UInt8], number: Int, capturedNanoseconds: UInt64) -> LiveViewFrame? {
        guard let stamped = JPEG.withComment(stamp(number: number, capturedNanoseconds: capturedNanoseconds), in: jpeg) else { return nil }
        return LiveViewFrame(number: number, capturedNanoseconds: capturedNanoseconds, jpeg: stamped)
    }

    static func stamp(number: Int, capturedNanoseconds: UInt64) -> String {
        "rig-frame \(number) captured-ns \(capturedNanoseconds)"
    }

    /// The number and capture time a frame's COM segment carries, if it has the stamp.
    public static func readStamp(_ jpeg: [UInt8]) -> (number: Int, capturedNanoseconds: UInt64)? {
        guard let text = JPEG.comment(in: jpeg) else { return nil }
        let words = text.split(separator: " ")
        guard words.count == 4, words[0] == "rig-frame", words[2] == "captured-ns", let number = Int(words[1]), let time = UInt64(words[3])
        else { return nil }
        return (number, time)
    }

    /// CLOCK_MONOTONIC now, in ns (the stamp's clock).
    public static func now() -> UInt64 { MonotonicClock().now() }
}

/// A camera whose AF point a tap on its live view moves (tap to focus): the gphoto2 camera
/// where libgphoto2 offers an AF point setting (Nikon's `changeafarea`, Canon's
/// `eoszoomposition`, Sony's `spotfocusarea`), and the simulated camera.
public protocol FocusPointSource: AnyObject, Sendable {
    /// Why a tap cannot move this camera's AF point, the one line the page and the API
    /// show; nil when it can. Never asks the camera (found when it was opened).
    var focusPointProblem: String? { get }
    /// Moves the AF point to the live view's point (`x` across from the left edge, `y` down
    /// from the top, 0…1; `viewAspect` the view's width / height) and focuses there, in
    /// the camera's own coordinates (`FocusGrid`: the view may be a crop of another
    /// aspect). Blocking, bounded.
    func focus(viewX x: Double, viewY y: Double, viewAspect: Double) throws(CameraError) -> FocusReport
}

/// Where a tap put the camera's AF point.
public struct FocusReport: Sendable, Equatable {
    /// The camera's coordinates, and the point in them.
    public var grid: FocusGrid
    public var cameraX: Int
    public var cameraY: Int
    /// What was set, as the camera names it (`changeafarea=3000x2000`).
    public var setting: String
    /// The camera says the point is in focus (nil: it does not say).
    public var focused: Bool?

    public init(grid: FocusGrid, cameraX: Int, cameraY: Int, setting: String, focused: Bool? = nil) {
        self.grid = grid
        self.cameraX = cameraX
        self.cameraY = cameraY
        self.setting = setting
        self.focused = focused
    }
}

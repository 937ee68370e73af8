/// Tap to focus: the coordinates a camera places its AF point in (Nikon's `changeafarea`,
/// Canon's `eoszoomposition`, Sony's `spotfocusarea`: pixels of the camera's whole frame,
/// `width` × `height`), and a point of the live view in them.
///
/// The live view shows the camera's frame cropped to the view's own aspect about the
/// centre: a 4:3 view of a 3:2 frame shows the frame's full height and the middle of its
/// width; a 16:9 view of it, its full width and the middle of its height. A view of the
/// frame's aspect shows all of it.
public struct FocusGrid: Sendable, Equatable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
    }

    /// The part of the frame the view shows: its origin and size, in the frame's pixels.
    public func shown(viewAspect: Double) -> (x: Double, y: Double, width: Double, height: Double) {
        let w = Double(width)
        let h = Double(height)
        guard viewAspect.isFinite, viewAspect > 0 else { return (0, 0, w, h) }
        if viewAspect < w / h {
            let shownWidth = h * viewAspect
            return ((w - shownWidth) / 2, 0, shownWidth, h)
        }
        let shownHeight = w / viewAspect
        return (0, (h - shownHeight) / 2, w, shownHeight)
    }

    /// The view's point (`x` across from its left edge, `y` down from its top, 0…1) in the
    /// frame's pixels, rounded and within the frame.
    public func point(viewX x: Double, viewY y: Double, viewAspect: Double) -> (x: Int, y: Int) {
        let s = shown(viewAspect: viewAspect)
        let px = (s.x + min(1, max(0, x)) * s.width).rounded()
        let py = (s.y + min(1, max(0, y)) * s.height).rounded()
        return (Int(min(Double(width - 1), max(0, px))), Int(min(Double(height - 1), max(0, py))))
    }

    /// The frame's point (pixels) in the view (0…1 each way; outside 0…1 when the view does
    /// not show it).
    public func viewPoint(x: Int, y: Int, viewAspect: Double) -> (x: Double, y: Double) {
        let s = shown(viewAspect: viewAspect)
        return ((Double(x) - s.x) / s.width, (Double(y) - s.y) / s.height)
    }
}

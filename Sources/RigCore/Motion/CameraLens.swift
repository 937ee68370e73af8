import FoundationEssentials
import Glibc

/// The camera and lens as a stitcher needs them: the field of view of the image as the
/// camera stores it (long side horizontal), how the camera sits on the head, and, when the
/// program gave them, the focal length and sensor size.
public struct CameraLens: Sendable, Equatable {
    public enum Orientation: String, Sendable, Equatable, CaseIterable {
        /// The sensor's long side horizontal.
        case landscape
        /// The camera turned a quarter turn on the head (an L-bracket): roll 90°.
        case portrait
    }

    /// Field of view along the stored image's width and height (landscape, whatever the
    /// orientation): what Hugin's `v` means for an image with roll 0.
    public var sensorFieldOfView: FieldOfView
    public var orientation: Orientation
    /// Focal length and sensor size in mm, when the program gave them (`focalLengthMm`).
    public var focalLengthMillimetres: Double?
    public var sensorWidthMillimetres: Double?
    public var sensorHeightMillimetres: Double?

    public init(
        sensorFieldOfView: FieldOfView, orientation: Orientation = .landscape, focalLengthMillimetres: Double? = nil,
        sensorWidthMillimetres: Double? = nil, sensorHeightMillimetres: Double? = nil
    ) {
        self.sensorFieldOfView = sensorFieldOfView
        self.orientation = orientation
        self.focalLengthMillimetres = focalLengthMillimetres
        self.sensorWidthMillimetres = sensorWidthMillimetres
        self.sensorHeightMillimetres = sensorHeightMillimetres
    }

    /// A lens known only by its horizontal field of view (`--hfov`), for an image of `size`:
    /// the vertical field of view follows from the image's aspect ratio.
    public init(horizontalDegrees: Double, imageSize: PixelSize) {
        let half = horizontalDegrees / 2 * .pi / 180
        let vertical = 2 * atan(tan(half) * Double(imageSize.height) / Double(imageSize.width)) * 180 / .pi
        self.init(sensorFieldOfView: FieldOfView(horizontalDegrees: horizontalDegrees, verticalDegrees: vertical))
    }

    /// The image's roll on the head, in Hugin's and Papywizard's degrees: 90 for portrait.
    public var rollDegrees: Double { orientation == .portrait ? 90 : 0 }

    /// The field of view as the camera looks out on the head (portrait swaps the sides):
    /// the angles the panorama covers per shot.
    public var mountedFieldOfView: FieldOfView {
        orientation == .portrait
            ? FieldOfView(horizontalDegrees: sensorFieldOfView.verticalDegrees, verticalDegrees: sensorFieldOfView.horizontalDegrees)
            : sensorFieldOfView
    }

    /// The diagonal of a full-frame (35 mm) sensor, 36 × 24 mm.
    public static let fullFrameDiagonalMillimetres = (36.0 * 36 + 24 * 24).squareRoot()

    /// Focal length and crop factor for Papywizard's header, from which Hugin's importer
    /// recomputes the field of view (it spreads the crop factor's diagonal over the image's
    /// own aspect ratio). Given focal length and sensor: those. Only a field of view: a
    /// crop factor of 1 and the focal length that gives this field of view on an image of
    /// `imageSize`.
    public func focalAndCropFactor(imageSize: PixelSize) -> (focalMillimetres: Double, cropFactor: Double) {
        if let f = focalLengthMillimetres, let w = sensorWidthMillimetres, let h = sensorHeightMillimetres {
            return (f, Self.fullFrameDiagonalMillimetres / (w * w + h * h).squareRoot())
        }
        let width = Double(imageSize.width)
        let height = Double(imageSize.height)
        let sensorWidth = Self.fullFrameDiagonalMillimetres * width / (width * width + height * height).squareRoot()
        return (sensorWidth / (2 * tan(sensorFieldOfView.horizontalDegrees / 2 * .pi / 180)), 1)
    }

    /// The image size to assume when none is given: 6000 px wide (a 24 MP camera) and as
    /// high as the field of view's aspect ratio says (4000 for 3:2).
    public var defaultImageSize: PixelSize {
        let h = sensorFieldOfView.horizontalDegrees / 2 * .pi / 180
        let v = sensorFieldOfView.verticalDegrees / 2 * .pi / 180
        let height = (Double(PixelSize.defaultWidth) * tan(v) / tan(h)).rounded()
        // The lens parser bounds both angles to 1…179°, so the height is finite and positive.
        return PixelSize(width: PixelSize.defaultWidth, height: height.isFinite && height >= 1 && height < 1e6 ? Int(height) : PixelSize.defaultWidth)
    }
}

/// An image's size in pixels.
public struct PixelSize: Sendable, Equatable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public static let defaultWidth = 6000
    /// The sizes `--image-size` accepts on either side.
    public static let validRange = 1...1_000_000

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `WxH` (`6000x4000`, `×` also accepted); nil when malformed or out of range.
    public init?(_ text: String) {
        let parts = text.lowercased().split(omittingEmptySubsequences: false) { $0 == "x" || $0 == "×" }
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let w = Int(parts[0]), let h = Int(parts[1]), Self.validRange.contains(w), Self.validRange.contains(h)
        else { return nil }
        self.init(width: w, height: h)
    }

    public var description: String { "\(width)x\(height)" }
}

import CTurboJPEG
import FoundationEssentials
import Glibc
import RigRuntime

/// Measures a frame the camera wrote: its luma histogram from a reduced-scale decode
/// (libjpeg-turbo decodes at 1/2…1/8 scale without the full image), and a small preview.
public enum ImageAnalysis {
    public struct Result: Sendable {
        /// 256 bins of 8-bit luma.
        public var histogram: [Int]
        /// A JPEG about `previewWidth` wide, if it could be made.
        public var preview: [UInt8]?
        /// The decoded (reduced) size the measures come from.
        public var width: Int
        public var height: Int
        /// The image's own size as stored, in pixels (what a stitcher reads).
        public var storedWidth: Int
        public var storedHeight: Int
    }

    /// nil when `jpeg` is not a JPEG libjpeg-turbo can read (a raw file).
    public static func analyse(jpeg: Data, previewWidth: Int = 480) -> Result? {
        guard let decoder = tjInitDecompress() else { return nil }
        defer { tjDestroy(decoder) }
        return jpeg.withUnsafeBytes { raw -> Result? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var width: Int32 = 0
            var height: Int32 = 0
            var subsampling: Int32 = 0
            var colorspace: Int32 = 0
            guard tjDecompressHeader3(decoder, base, UInt(raw.count), &width, &height, &subsampling, &colorspace) == 0, width > 0, height > 0 else {
                return nil
            }
            // The smallest scale still at least `previewWidth` wide (or the smallest there is).
            var count: Int32 = 0
            var (w, h) = (Int(width), Int(height))
            if let factors = tjGetScalingFactors(&count) {
                let scaled = (0..<Int(count)).map { i -> (Int, Int) in
                    let f = factors[i]
                    return ((Int(width) * Int(f.num) + Int(f.denom) - 1) / Int(f.denom), (Int(height) * Int(f.num) + Int(f.denom) - 1) / Int(f.denom))
                }
                if let best = scaled.filter({ $0.0 >= min(previewWidth, Int(width)) }).min(by: { $0.0 < $1.0 }) { (w, h) = best }
            }
            guard w > 0, h > 0, w * h <= 64_000_000 else { return nil }
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            let decoded = pixels.withUnsafeMutableBufferPointer { buffer in
                tjDecompress2(decoder, base, UInt(raw.count), buffer.baseAddress, Int32(w), 0, Int32(h), Int32(TJPF_RGB.rawValue), TJFLAG_FASTDCT)
            }
            guard decoded == 0 else { return nil }
            var histogram = [Int](repeating: 0, count: 256)
            var i = 0
            while i + 2 < pixels.count {
                // Rec. 709 luma weights ×10000, on the stored (encoded) values.
                let y = (2126 * Int(pixels[i]) + 7152 * Int(pixels[i + 1]) + 722 * Int(pixels[i + 2]) + 5000) / 10000
                histogram[min(255, y)] += 1
                i += 3
            }
            return Result(
                histogram: histogram, preview: JPEG.encode(rgb: pixels, width: w, height: h, quality: 80), width: w, height: h, storedWidth: Int(width),
                storedHeight: Int(height))
        }
    }
}

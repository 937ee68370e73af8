import CTurboJPEG

/// JPEG through libjpeg-turbo (TurboJPEG API), the one place rig encodes and decodes
/// one: shot previews (RigGPhoto2's `ImageAnalysis`), the simulated camera's live view,
/// the live view's luma for its motion (`LiveViewMotion`), and the comment segment (COM, `FF FE`) that stamps a live-view frame with its number
/// and capture time without touching the image data.
public enum JPEG {
    /// 8-bit RGB pixels (`width` × `height` × 3 bytes) as a baseline JPEG (4:2:0), or nil
    /// if libjpeg-turbo refuses them.
    public static func encode(rgb pixels: [UInt8], width: Int, height: Int, quality: Int = 80) -> [UInt8]? {
        guard width > 0, height > 0, pixels.count >= width * height * 3, let encoder = tjInitCompress() else { return nil }
        defer { tjDestroy(encoder) }
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let result = pixels.withUnsafeBufferPointer { buffer in
            tjCompress2(
                encoder, buffer.baseAddress, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &output, &size, Int32(TJSAMP_420.rawValue),
                Int32(min(100, max(1, quality))), 0)
        }
        defer { tjFree(output) }
        guard result == 0, let output else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// A JPEG's size from its header: nil when unreadable, empty, or over 64 megapixels.
    private static func size(_ jpeg: [UInt8], decoder: tjhandle) -> (Int32, Int32)? {
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        guard tjDecompressHeader3(decoder, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0, width > 0, height > 0,
            Int(width) * Int(height) <= 64_000_000
        else { return nil }
        return (width, height)
    }

    /// A JPEG decoded whole to 8-bit RGB; nil when libjpeg-turbo cannot read it.
    public static func decode(_ jpeg: [UInt8]) -> (width: Int, height: Int, rgb: [UInt8])? {
        guard !jpeg.isEmpty, let decoder = tjInitDecompress() else { return nil }
        defer { tjDestroy(decoder) }
        guard let (width, height) = size(jpeg, decoder: decoder) else { return nil }
        var pixels = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
        let decoded = pixels.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(decoder, jpeg, UInt(jpeg.count), buffer.baseAddress, width, 0, height, Int32(TJPF_RGB.rawValue), TJFLAG_FASTDCT)
        }
        guard decoded == 0 else { return nil }
        return (Int(width), Int(height), pixels)
    }

    /// A JPEG's luma (8-bit grey), decoded at the smallest of libjpeg-turbo's scales (1/8…1)
    /// still at least `minWidth` wide (or whole, when it is narrower): what the live view's
    /// motion is measured on. Nil when libjpeg-turbo cannot read it.
    public static func luma(_ jpeg: [UInt8], minWidth: Int) -> LumaImage? {
        guard !jpeg.isEmpty, let decoder = tjInitDecompress() else { return nil }
        defer { tjDestroy(decoder) }
        guard let (width, height) = size(jpeg, decoder: decoder) else { return nil }
        var (w, h) = (Int(width), Int(height))
        var count: Int32 = 0
        if let factors = tjGetScalingFactors(&count) {
            for i in 0..<Int(count) {
                let f = factors[i]
                let sw = (Int(width) * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
                let sh = (Int(height) * Int(f.num) + Int(f.denom) - 1) / Int(f.denom)
                if sw >= min(minWidth, Int(width)), sw < w { (w, h) = (sw, sh) }
            }
        }
        var pixels = [UInt8](repeating: 0, count: w * h)
        let decoded = pixels.withUnsafeMutableBufferPointer { buffer in
            tjDecompress2(decoder, jpeg, UInt(jpeg.count), buffer.baseAddress, Int32(w), 0, Int32(h), Int32(TJPF_GRAY.rawValue), TJFLAG_FASTDCT)
        }
        guard decoded == 0 else { return nil }
        return LumaImage(width: w, height: h, pixels: pixels)
    }

    /// `jpeg` with a COM segment holding `text` (at most 65,533 bytes), placed after the
    /// start of image and the JFIF header if there is one; nil when `jpeg` does not start
    /// like a JPEG. The image data is not touched.
    public static func withComment(_ text: String, in jpeg: [UInt8]) -> [UInt8]? {
        let body = Array(text.utf8.prefix(65_533))
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
        var at = 2
        // APP0 (JFIF) must stay first after SOI.
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0, jpeg.count >= 6 {
            let length = Int(jpeg[4]) << 8 | Int(jpeg[5])
            guard 2 + 2 + length <= jpeg.count else { return nil }
            at = 2 + 2 + length
        }
        let length = body.count + 2
        var out = [UInt8]()
        out.reserveCapacity(jpeg.count + length + 2)
        out.append(contentsOf: jpeg[0..<at])
        out.append(contentsOf: [0xFF, 0xFE, UInt8(length >> 8), UInt8(length & 0xFF)])
        out.append(contentsOf: body)
        out.append(contentsOf: jpeg[at...])
        return out
    }

    /// The text of the first COM segment before the image data, if there is one.
    public static func comment(in jpeg: [UInt8]) -> String? {
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return nil }
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF {
            let marker = jpeg[at + 1]
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            guard length >= 2, at + 2 + length <= jpeg.count else { return nil }
            if marker == 0xFE { return String(decoding: jpeg[(at + 4)..<(at + 2 + length)], as: UTF8.self) }
            // Start of scan: the image data follows, no header segment after it.
            if marker == 0xDA { return nil }
            at += 2 + length
        }
        return nil
    }
}

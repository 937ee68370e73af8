import CQREncode
import Glibc

/// A QR code (Debian's libqrencode: byte mode, error correction M, the smallest version
/// that holds the text), as modules, and drawn for a terminal.
public struct QRCode: Sendable, Equatable {
    /// Modules on a side.
    public let size: Int
    /// Row by row, `true` for a dark module.
    public let modules: [Bool]

    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    public init(_ text: String) throws(Failure) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw Failure(description: "cannot encode \(text.utf8.count) bytes as a QR code: \(String(cString: strerror(errno)))")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        size = width
        modules = (0..<width * width).map { code.pointee.data[$0] & 1 == 1 }
    }

    init(size: Int, modules: [Bool]) {
        self.size = size
        self.modules = modules
    }

    public subscript(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }

    /// The quiet zone a reader needs around the code, in modules.
    public static let margin = 4

    /// Two rows of modules a line, in Unicode half blocks (▀ ▄ █ and space), black on white
    /// whatever the terminal's colours (`colours`: ANSI escapes; without them, the
    /// terminal's foreground is dark), with the quiet zone all round.
    public func terminalText(colours: Bool = true) -> String {
        let range = -Self.margin..<(size + Self.margin)
        var lines: [String] = []
        for y in stride(from: -Self.margin, to: size + Self.margin, by: 2) {
            var line = colours ? "\u{1B}[30;47m" : ""
            for x in range {
                switch (self[x, y], self[x, y + 1]) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + (colours ? "\u{1B}[0m" : ""))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A binary PGM image, `scale` pixels a module, with the quiet zone (tests decode it).
    public func pgm(scale: Int = 4) -> [UInt8] {
        let side = (size + 2 * Self.margin) * scale
        var bytes = Array("P5\n\(side) \(side)\n255\n".utf8)
        for py in 0..<side {
            for px in 0..<side {
                bytes.append(self[px / scale - Self.margin, py / scale - Self.margin] ? 0 : 255)
            }
        }
        return bytes
    }
}

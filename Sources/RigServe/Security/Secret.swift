/// The server's secrets (the access token, the control key): made from the kernel's CSPRNG
/// and compared in constant time, one way for both.
enum Secret {
    /// `bytes` random bytes as lowercase hex (`SystemRandomNumberGenerator` is getrandom(2)
    /// on Linux).
    static func hex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text += (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }
        return text
    }

    /// Whether `a` and `b` are the same text, taking as long whatever the first difference
    /// (a timing side channel must not tell an attacker how much of a guess was right).
    static func equal(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in x.indices { difference |= x[i] ^ (i < y.count ? y[i] : 0) }
        return difference == 0
    }
}

/// An output with a small text display (the BLEControl board's 2×16 LCD): step sync shows
/// "step k of N" and Cascable's user message there.
public protocol TextDisplay: AnyObject {
    func showText(line1: String, line2: String)
}

/// What the kernel says about a GPIO line, without requesting it (`rig doctor`).
public enum GPIOLineInfo {
    /// The consumer that holds `line` of `chip` (a name or path, as the rig file gives
    /// it), or nil when the line is free (or the chip cannot be opened: checked apart).
    public static func consumer(chip: String, line: Int) -> String? {
        (try? Libgpiod.Chip(chip))?.consumer(of: line)
    }
}

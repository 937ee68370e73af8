import CGPIOD

/// What the kernel says about a GPIO line, without requesting it (`rig doctor`).
public enum GPIOLineInfo {
    /// The consumer that holds `line` of `chip` (a name or path, as the rig file gives
    /// it), or nil when the line is free (or the chip cannot be opened: checked apart).
    public static func consumer(chip: String, line: Int) -> String? {
        guard let handle = gpiod_chip_open_lookup(chip) else { return nil }
        defer { gpiod_chip_close(handle) }
        guard line >= 0, let info = gpiod_chip_get_line(handle, UInt32(line)) else { return nil }
        guard gpiod_line_is_used(info) else { return nil }
        return gpiod_line_consumer(info).map { String(cString: $0) } ?? "the kernel"
    }
}

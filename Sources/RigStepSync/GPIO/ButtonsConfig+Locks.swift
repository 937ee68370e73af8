import RigCore

extension ButtonsConfig {
    /// `HardwareLock` names of every line the buttons and LEDs use (`gpio-gpiochip0-13`, …):
    /// whichever trigger opens them locks them.
    var lockNames: [String] {
        let chipName = chip.split(separator: "/").last.map(String.init) ?? chip
        return ([continueLine, stopLine] + [continueLED, stopLED].compactMap { $0 }).map { "gpio-\(chipName)-\($0)" }
    }
}

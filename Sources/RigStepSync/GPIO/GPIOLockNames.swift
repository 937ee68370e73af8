import RigCore
import RigRuntime

/// `HardwareLock` names of GPIO lines (`gpio-gpiochip0-13`, …): one name per line, whoever
/// opens it (the buttons, their LEDs, the camera), so two processes, or buttons and a camera
/// wired to the same line, cannot drive it at once.
enum GPIOLockNames {
    /// The chip by its device node, however it is spelled (`gpiochip0`, `/dev/gpiochip0`,
    /// `0`, a symlink): one line, one lock.
    static func name(chip: String, line: Int) -> String {
        "gpio-\(HardwareLock.deviceNode(chip, numberedPrefix: "gpiochip"))-\(line)"
    }
}

extension ButtonsConfig {
    /// Every line the buttons and LEDs use: whichever trigger opens them locks them.
    var lockNames: [String] {
        ([continueLine, stopLine] + [continueLED, stopLED].compactMap { $0 }).map { GPIOLockNames.name(chip: chip, line: $0) }
    }
}

extension GPIOCameraConfig {
    /// The shutter and focus lines.
    var lockNames: [String] {
        ([shutterLine] + [focusLine].compactMap { $0 }).map { GPIOLockNames.name(chip: chip, line: $0) }
    }
}

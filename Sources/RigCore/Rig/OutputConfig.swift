import RigFormat

/// Which output drives a rig (`"output"` in a rig file). RigCore keeps only the output's
/// `type` and its section; the driver reads the rest of the section in its own module
/// (`SimOutputConfig` in RigRuntime, `PCA9685OutputConfig` in RigPCA9685,
/// `BLEControlOutputConfig` in RigBLEControl), beside its maths. The composition root
/// lists the drivers, so `rig check` validates the section before anything opens.
public struct OutputConfig: Sendable, Equatable {
    /// The driver's name (`"sim"`, `"pca9685"`, `"blecontrol"`).
    public var type: String
    /// The whole `"output"` object, with its place in the file.
    public var section: ConfigSection
    /// Each axis's `"channel"` value with its place (in the rig's axis order), so a driver
    /// refuses a channel it does not have where the file says it; empty for a rig made in code.
    public var channelPlaces: [ConfigSection] = []

    /// An output section made in code (tests, `--output sim`): `{"type": type}`.
    public init(type: String) {
        self.type = type
        section = ConfigSection(object: ["type": type], path: "$.output")
    }

    public init(type: String, section: ConfigSection) {
        self.type = type
        self.section = section
    }

    /// The built-in simulated rig, with its defaults.
    public static let sim = OutputConfig(type: "sim")

    /// The section's object for the driver to read (`type` is accounted for): it reads its
    /// own keys and calls `finish()`, which names any key nobody knows.
    public func object() throws(FileError) -> ObjectReader {
        try section.object(sharedKeys: ["type"])
    }

    /// Refuses an axis channel the driver does not have, at the channel's place in the file:
    /// the driver calls this with its channel count.
    public func checkChannels(of axes: [Axis], count: Int) throws(FileError) {
        for (index, axis) in axes.enumerated() where !(0..<count).contains(axis.channel) {
            let message = "channel \(axis.channel) does not exist on a \(type) output; valid: 0…\(count - 1)"
            if index < channelPlaces.count { throw channelPlaces[index].reader.error(message) }
            throw section.reader.error("axis \"\(elided(axis.name))\": \(message)")
        }
    }

    static func parse(_ value: ValueReader) throws(FileError) -> OutputConfig {
        let object = try value.object()
        let type = try object.required("type", "the output's type, such as \"sim\", \"pca9685\" or \"blecontrol\"").nonEmptyString()
        // The other keys are the driver's: it reads them and refuses unknown ones.
        return OutputConfig(type: type, section: ConfigSection(value))
    }
}

extension ValueReader {
    /// A Bluetooth address written `AA:BB:CC:DD:EE:FF` (any case), returned upper-case.
    public func bluetoothAddress() throws(FileError) -> String {
        let text = try string()
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw error("\"\(elided(text))\" is not a Bluetooth address; write it like \"AA:BB:CC:DD:EE:FF\"")
        }
        return text.uppercased()
    }

    /// A BlueZ adapter name: `hci0`, `hci1`, …
    public func adapterName() throws(FileError) -> String {
        let text = try string()
        guard text.hasPrefix("hci"), let number = Int(text.dropFirst(3)), number >= 0 else {
            throw error("\"\(elided(text))\" is not an adapter name; valid: \"hci0\", \"hci1\", …")
        }
        return text
    }
}

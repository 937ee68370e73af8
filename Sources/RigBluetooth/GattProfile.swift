/// A GATT service declared as a type (as BlueCap's profiles do): its UUID, a name for
/// people, and the characteristics a peer must offer with the properties rig relies on.
/// One declaration per device kind; the code that finds, checks and uses the device reads
/// it instead of UUID strings of its own.
public struct GattServiceProfile: Sendable {
    public let name: String
    /// As the device's documents write it: a 16-bit short form ("FFE0") or 128 bits.
    public let uuid: String
    public let characteristics: [GattCharacteristicProfile]

    public init(name: String, uuid: String, characteristics: [GattCharacteristicProfile]) {
        self.name = name
        self.uuid = uuid
        self.characteristics = characteristics
    }
}

/// One characteristic of a `GattServiceProfile`.
public struct GattCharacteristicProfile: Sendable, Equatable {
    /// GATT characteristic properties, spelled as BlueZ's `Flags` spell them.
    public enum Property: String, Sendable, CaseIterable {
        case read, write, notify, indicate
        case writeWithoutResponse = "write-without-response"
    }

    public let name: String
    public let uuid: String
    /// What rig needs of it: a characteristic that lacks one of these is not the device.
    public let required: [Property]
    /// What rig uses when offered (a faster path), and does without.
    public let optional: [Property]

    public init(name: String, uuid: String, required: [Property], optional: [Property] = []) {
        self.name = name
        self.uuid = uuid
        self.required = required
        self.optional = optional
    }

    /// The required properties that BlueZ's `Flags` for a found characteristic lack. A
    /// peer that lists no flags at all is given the benefit of the doubt (some stacks do not).
    public func missing(in flags: [String]) -> [Property] {
        guard !flags.isEmpty else { return [] }
        return required.filter { !flags.contains($0.rawValue) }
    }

    /// True when the found characteristic offers `property` (or lists no flags).
    public func offers(_ property: Property, flags: [String]) -> Bool {
        flags.isEmpty || flags.contains(property.rawValue)
    }
}

import RigCore
import RigFormat

/// Settings of the Cascable "Basic User Input" step sync (`"stepSync"` in a rig file).
public struct StepSyncConfig: Sendable, Equatable {
    /// The advertised name (cut to fit the advertisement); nil: derived from the host name.
    public var name: String?
    public var adapter = "hci0"
    /// How long a continue/stop press is held down.
    public var pressSeconds = 0.1
    /// The least time after Continue Available 1 before the rig moves (a long exposure
    /// the recipe is still taking).
    public var exposureGuardSeconds = 0.0
    /// Press Stop when the rig faults mid-program (if the recipe allows stopping).
    public var stopOnFault = false
    /// Writes only from a phone `rig pair` bonded (the default): the writable
    /// characteristics ask BlueZ for an encrypted, authenticated link and the write handler
    /// checks the writer against the paired-phones list (``PairedPhones``). False: anyone
    /// in range may write, as Cascable's reference accessories allow.
    public var requirePairing = true
    /// Centrals admitted besides the paired phones (bonded outside rig, e.g. with
    /// `bluetoothctl`): the key of earlier versions, kept.
    public var allowedCentrals: [String] = []

    public init() {}

    /// The rig's `"stepSync"` section read here, beside the peripheral; the defaults when
    /// the rig has none.
    public static func parse(_ section: ConfigSection?) throws(FileError) -> StepSyncConfig {
        guard let section else { return StepSyncConfig() }
        let object = try section.reader.object()
        var config = StepSyncConfig()
        if let name = object.optional("name") { config.name = try name.nonEmptyString() }
        if let adapter = object.optional("adapter") { config.adapter = try adapter.adapterName() }
        if let press = object.optional("pressMs") { config.pressSeconds = try press.number(in: 20...2000, unit: "ms") / 1000 }
        if let guardMs = object.optional("exposureGuardMs") {
            config.exposureGuardSeconds = try guardMs.number(in: 0...600_000, unit: "ms") / 1000
        }
        if let s = object.optional("stopOnFault") { config.stopOnFault = try s.bool() }
        if let r = object.optional("requirePairing") { config.requirePairing = try r.bool() }
        // `encryptWrites` (earlier versions) is `requirePairing` by its old name, unless both are given.
        if let e = object.optional("encryptWrites") {
            guard object.has("requirePairing") == false else {
                throw object.error("give \"requirePairing\" only (\"encryptWrites\" is its old name)")
            }
            config.requirePairing = try e.bool()
        }
        if let list = object.optional("allowedCentrals") {
            for entry in try list.array() { config.allowedCentrals.append(try entry.bluetoothAddress()) }
        }
        try object.finish()
        return config
    }
}

/// Why a BlueZ central operation failed, in words a user can act on.
public enum BlueZCentralError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No `org.bluez.Adapter1` at `/org/bluez/<name>`.
    case noAdapter(name: String, available: [String])
    /// The adapter exists but is not powered.
    case adapterOff(name: String)
    /// No device matching the filter appeared within the time allowed.
    case notFound(adapter: String, filter: String, seconds: Double)
    /// `Device1.Connect` or service resolution did not finish in time.
    case connectTimedOut(device: String, seconds: Double)
    /// The device is connected and resolved but has no such characteristic.
    case noCharacteristic(device: String, uuid: String)
    /// The device disconnected while we were setting it up.
    case disconnected(device: String)
    /// BlueZ answered with an error.
    case bluez(operation: String, message: String)

    public var description: String {
        switch self {
        case .noAdapter(let name, let available):
            "no Bluetooth adapter \(name) (available: \(available.isEmpty ? "none" : available.joined(separator: ", "))); is bluetoothd running and the adapter plugged in?"
        case .adapterOff(let name):
            "Bluetooth adapter \(name) is powered off: `bluetoothctl power on` (or unblock it with `rfkill unblock bluetooth`)"
        case .notFound(let adapter, let filter, let seconds):
            "no device matching \(filter) was seen on \(adapter) within \(formatSeconds(seconds)) s; is the board powered, in range and not connected to another central (a phone)?"
        case .connectTimedOut(let device, let seconds):
            "connecting to \(device) did not finish within \(formatSeconds(seconds)) s"
        case .noCharacteristic(let device, let uuid):
            "\(device) has no characteristic \(uuid): is it a BLEControl board (HM-10 style module)?"
        case .disconnected(let device):
            "\(device) disconnected during set-up"
        case .bluez(let operation, let message):
            "BlueZ \(operation) failed: \(message)"
        }
    }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}

import RigBluetooth

/// The BLEControl board's GATT profile: an HM-10 style serial bridge, one service with one
/// characteristic that takes the board's text commands (written with response; without
/// response through an acquired fd when offered) and notifies its replies.
public enum BLEControlProfile {
    public static let serial = GattCharacteristicProfile(
        name: "serial", uuid: "FFE1", required: [.write, .notify], optional: [.writeWithoutResponse])
    public static let service = GattServiceProfile(name: "BLEControl serial", uuid: "FFE0", characteristics: [serial])
}

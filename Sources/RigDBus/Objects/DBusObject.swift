/// An object to export with ``DBusConnection/export(_:)``: a path and its interfaces.
///
/// `org.freedesktop.DBus.Properties` (from each interface's properties) and
/// `org.freedesktop.DBus.Introspectable` are answered for every object. With
/// `isObjectManager`, the object also answers `org.freedesktop.DBus.ObjectManager.GetManagedObjects`
/// with every exported object strictly below its path (what BlueZ's `RegisterApplication`
/// reads), and objects exported or unexported below it later are announced with
/// `InterfacesAdded` / `InterfacesRemoved`.
public struct DBusObject: Sendable {
    public var path: String
    public var interfaces: [DBusInterface]
    public var isObjectManager: Bool

    public init(path: String, interfaces: [DBusInterface], isObjectManager: Bool = false) {
        self.path = path
        self.interfaces = interfaces
        self.isObjectManager = isObjectManager
    }

    func interface(named name: String) -> DBusInterface? {
        interfaces.first { $0.name == name }
    }
}

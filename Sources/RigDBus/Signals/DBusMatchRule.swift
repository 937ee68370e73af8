/// Which signals a subscription wants; every field left nil matches anything.
///
/// The rule is sent to the bus as an `AddMatch` string and also checked locally, because the
/// bus delivers every signal matching any rule of the connection. A well-known `sender` (such
/// as `org.bluez`) is matched locally against its current owner, tracked through
/// `NameOwnerChanged`.
public struct DBusMatchRule: Sendable, Hashable {
    public var sender: String?
    public var path: String?
    /// Matches `pathNamespace` itself and every path below it.
    public var pathNamespace: String?
    public var interface: String?
    public var member: String?
    /// Matches signals whose first argument is this string.
    public var arg0: String?

    public init(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        interface: String? = nil, member: String? = nil, arg0: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.pathNamespace = pathNamespace
        self.interface = interface
        self.member = member
        self.arg0 = arg0
    }

    /// `org.freedesktop.DBus.ObjectManager.InterfacesAdded` from `sender`'s manager at `root`.
    public static func interfacesAdded(sender: String? = nil, root: String? = nil) -> DBusMatchRule {
        DBusMatchRule(sender: sender, path: root, interface: objectManager, member: "InterfacesAdded")
    }

    /// `org.freedesktop.DBus.ObjectManager.InterfacesRemoved`.
    public static func interfacesRemoved(sender: String? = nil, root: String? = nil) -> DBusMatchRule {
        DBusMatchRule(sender: sender, path: root, interface: objectManager, member: "InterfacesRemoved")
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged`, optionally only for one interface
    /// (`arg0`) and one path or path namespace.
    public static func propertiesChanged(
        sender: String? = nil, path: String? = nil, pathNamespace: String? = nil,
        interface: String? = nil
    ) -> DBusMatchRule {
        DBusMatchRule(
            sender: sender, path: path, pathNamespace: pathNamespace,
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", arg0: interface)
    }

    /// libdbus defines no constant for this interface.
    static let objectManager = "org.freedesktop.DBus.ObjectManager"

    /// Checks every field with libdbus's validators.
    func validate() throws(DBusMarshalError) {
        if let sender { try DBusSyntax.checkBusName(sender) }
        if let path { try DBusSyntax.checkPath(path) }
        if let pathNamespace { try DBusSyntax.checkPath(pathNamespace) }
        if let interface { try DBusSyntax.checkInterface(interface) }
        if let member { try DBusSyntax.checkMember(member) }
        if let arg0 { try DBusSyntax.checkString(arg0) }
    }

    /// The rule in the bus's `AddMatch` syntax.
    var matchString: String {
        var parts = ["type='signal'"]
        func add(_ key: String, _ value: String?) {
            // Only arg0 can contain a quote; the others were validated as names and paths.
            guard let value else { return }
            var quoted = ""
            for character in value { quoted += character == "'" ? "'\\''" : String(character) }
            parts.append("\(key)='\(quoted)'")
        }
        add("sender", sender)
        add("path", path)
        add("path_namespace", pathNamespace)
        add("interface", interface)
        add("member", member)
        add("arg0", arg0)
        return parts.joined(separator: ",")
    }

    /// True for a sender given as a well-known name, which must be resolved to its owner.
    var wellKnownSender: String? {
        guard let sender, !sender.hasPrefix(":"), sender != "org.freedesktop.DBus" else { return nil }
        return sender
    }

    /// Local check; `owner` is the current unique name behind a well-known `sender`.
    func matches(_ signal: DBusSignal, owner: String?) -> Bool {
        if let sender {
            let expected = wellKnownSender == nil ? sender : owner
            guard let expected, signal.sender == expected else { return false }
        }
        if let path, signal.path != path { return false }
        if let pathNamespace,
            !(pathNamespace == "/" || signal.path == pathNamespace
                || signal.path.hasPrefix(pathNamespace + "/"))
        {
            return false
        }
        if let interface, signal.interface != interface { return false }
        if let member, signal.member != member { return false }
        if let arg0 {
            guard case .string(let first)? = signal.args.first, first == arg0 else { return false }
        }
        return true
    }
}

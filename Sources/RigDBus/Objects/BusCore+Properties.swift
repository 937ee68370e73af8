extension BusCore {
    /// `org.freedesktop.DBus.Properties`: Get, GetAll, Set.
    func handleProperties(_ call: DBusMethodCall, _ object: DBusObject) throws(DBusError) -> [DBusValue] {
        let signature = call.args.dbusSignature
        switch call.member {
        case "Get":
            guard signature == "ss", let name = call.args[0].string, let property = call.args[1].string else {
                throw DBusError(DBusError.invalidArgs, "Get takes \"ss\", got \"\(signature)\"")
            }
            let entry = try lookup(object, name, property)
            return [.variant(try entry.currentValue(name: property))]
        case "GetAll":
            guard signature == "s", let name = call.args[0].string else {
                throw DBusError(DBusError.invalidArgs, "GetAll takes \"s\", got \"\(signature)\"")
            }
            if let interface = object.interface(named: name) {
                return [.vardict(interface.propertyValues())]
            }
            if Self.standardInterfaces(object).contains(name) { return [.vardict([:])] }
            throw DBusError(DBusError.unknownInterface, "no interface \(name) at \(object.path)")
        case "Set":
            guard signature == "ssv", let name = call.args[0].string, let property = call.args[1].string else {
                throw DBusError(DBusError.invalidArgs, "Set takes \"ssv\", got \"\(signature)\"")
            }
            let value = call.args[2].unwrappedOnce
            // Until a setter accepts the value, this side owns any fd inside it.
            var accepted = false
            defer { if !accepted { [value].closeFileDescriptors() } }
            let entry = try lookup(object, name, property)
            guard let set = entry.set else {
                throw DBusError(DBusError.propertyReadOnly, "property \(property) is read-only")
            }
            guard value.signature == entry.signature else {
                throw DBusError(DBusError.invalidArgs, "property \(property) has type \(entry.signature), got \(value.signature)")
            }
            do {
                accepted = true
                try set(value)
            } catch let error as DBusError {
                throw error
            } catch {
                throw DBusError(DBusError.failed, "\(error)")
            }
            return []
        default:
            throw DBusError(DBusError.unknownMethod, "no method \(call.member) in \(Self.propertiesInterface)")
        }
    }

    private func lookup(_ object: DBusObject, _ interfaceName: String, _ property: String) throws(DBusError) -> DBusProperty {
        guard let interface = object.interface(named: interfaceName) else {
            throw DBusError(DBusError.unknownInterface, "no interface \(interfaceName) at \(object.path)")
        }
        guard let entry = interface.properties[property] else {
            throw DBusError(DBusError.unknownProperty, "no property \(property) in \(interfaceName)")
        }
        return entry
    }

    static func standardInterfaces(_ object: DBusObject) -> [String] {
        [propertiesInterface, introspectableInterface, peerInterface] + (object.isObjectManager ? [DBusMatchRule.objectManager] : [])
    }

    /// `GetManagedObjects`: every exported object strictly below `root`, as `a{oa{sa{sv}}}`.
    func managedObjects(below root: String) -> DBusValue {
        let below = objects.values.filter { Self.isStrictlyBelow($0.path, root) }.sorted { $0.path < $1.path }
        return .dictionary(
            key: "o", value: "a{sa{sv}}",
            below.map { object in
                DBusDictEntry(
                    .objectPath(object.path),
                    .dictionary(
                        key: "s", value: "a{sv}",
                        object.interfaces.map {
                            DBusDictEntry(.string($0.name), .vardict($0.propertyValues()))
                        }))
            })
    }
}

extension DBusValue {
    /// The contents of one variant layer (a `Set` value arrives as a variant).
    var unwrappedOnce: DBusValue {
        if case .variant(let inner) = self { inner } else { self }
    }
}

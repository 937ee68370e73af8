import CDBus

extension BusCore {
    static let propertiesInterface: String = DBUS_INTERFACE_PROPERTIES
    static let introspectableInterface: String = DBUS_INTERFACE_INTROSPECTABLE
    static let peerInterface: String = DBUS_INTERFACE_PEER

    /// `dbus_connection_try_register_object_path` with one vtable that routes to ``handleCall(_:)``.
    func export(_ object: DBusObject) throws {
        guard let connection, !disconnected else { throw unavailableError }
        try DBusSyntax.checkPath(object.path)
        for interface in object.interfaces {
            try DBusSyntax.checkInterface(interface.name)
            for (name, method) in interface.methods {
                try DBusSyntax.checkMember(name)
                try DBusSyntax.checkSignature(method.inSignature)
                try DBusSyntax.checkSignature(method.outSignature)
            }
            for (name, property) in interface.properties {
                try DBusSyntax.checkMember(name)
                try DBusSyntax.checkSingleSignature(property.signature)
            }
            for (name, signature) in interface.signals {
                try DBusSyntax.checkMember(name)
                try DBusSyntax.checkSignature(signature)
            }
        }
        guard objects[object.path] == nil else { throw DBusConnectionError.pathInUse(object.path) }
        var vtable = DBusObjectPathVTable(
            unregister_function: { _, data in
                if let data { Unmanaged<BusCore>.fromOpaque(data).release() }
            },
            message_function: { _, message, data in
                guard let message, let core = BusCore.from(data) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
                return core.handleCall(message)
            },
            dbus_internal_pad1: nil, dbus_internal_pad2: nil, dbus_internal_pad3: nil, dbus_internal_pad4: nil)
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let data = Unmanaged.passRetained(self).toOpaque()
        guard dbus_connection_try_register_object_path(connection, object.path, &vtable, data, &error) != 0 else {
            Unmanaged<BusCore>.fromOpaque(data).release()
            if dbus_error_has_name(&error, "org.freedesktop.DBus.Error.ObjectPathInUse") != 0 {
                throw DBusConnectionError.pathInUse(object.path)
            }
            throw DBusConnectionError.outOfMemory
        }
        objects[object.path] = object
        if let manager = manager(above: object.path) {
            let interfaces = DBusValue.dictionary(
                key: "s", value: "a{sv}",
                object.interfaces.map {
                    DBusDictEntry(.string($0.name), .vardict($0.propertyValues()))
                })
            emit(
                path: manager, interface: DBusMatchRule.objectManager, member: "InterfacesAdded",
                args: [.objectPath(object.path), interfaces])
        }
    }

    /// `dbus_connection_unregister_object_path`; announces `InterfacesRemoved` under a manager.
    func unexport(path: String) throws {
        guard let connection else { throw unavailableError }
        guard let object = objects.removeValue(forKey: path) else { return }
        guard dbus_connection_unregister_object_path(connection, path) != 0 else { throw DBusConnectionError.outOfMemory }
        if !disconnected, let manager = manager(above: path) {
            emit(
                path: manager, interface: DBusMatchRule.objectManager, member: "InterfacesRemoved",
                args: [.objectPath(path), .strings(object.interfaces.map(\.name))])
        }
    }

    /// The nearest object manager strictly above `path`.
    func manager(above path: String) -> String? {
        objects.values.filter { $0.isObjectManager && Self.isStrictlyBelow(path, $0.path) }
            .map(\.path).max { $0.utf8.count < $1.utf8.count }
    }

    static func isStrictlyBelow(_ path: String, _ root: String) -> Bool {
        path != root && (root == "/" || path.hasPrefix(root + "/"))
    }

    /// Builds and sends a signal; failures are logged (used for announcements).
    func emit(path: String, interface: String, member: String, args: [DBusValue]) {
        do {
            let message = try DBusMessageHandle.signal(path: path, interface: interface, member: member)
            try message.append(args)
            try sendNoReply(message)
        } catch {
            logger.warning("cannot emit \(interface).\(member)", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    /// The vtable's message function: one incoming call to an exported path.
    func handleCall(_ raw: OpaquePointer) -> DBusHandlerResult {
        guard dbus_message_get_type(raw) == DBUS_MESSAGE_TYPE_METHOD_CALL else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let message = DBusMessageHandle(retaining: raw)
        guard let path = message.path, let member = message.member, let object = objects[path] else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        let interface = message.interface
        // The Peer interface is answered by libdbus itself.
        if interface == Self.peerInterface { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let args: [DBusValue]
        do {
            args = try message.read()
        } catch {
            reply(to: message, .failure(DBusError(DBusError.invalidArgs, "\(error)")), outSignature: nil)
            return DBUS_HANDLER_RESULT_HANDLED
        }
        let call = DBusMethodCall(
            sender: message.sender, path: path, interface: interface, member: member,
            args: args, noReplyExpected: message.noReply)
        switch interface {
        case Self.propertiesInterface?:
            reply(to: message, Result { () throws(DBusError) in try handleProperties(call, object) }, outSignature: nil)
            // Only Set passes a value on, and only to a setter that accepted it.
            if member != "Set" || args.dbusSignature != "ssv" { args.closeFileDescriptors() }
        case Self.introspectableInterface? where member == "Introspect":
            args.closeFileDescriptors()
            reply(to: message, .success([.string(introspectionXML(for: object))]), outSignature: "s")
        case DBusMatchRule.objectManager? where member == "GetManagedObjects" && object.isObjectManager:
            args.closeFileDescriptors()
            reply(to: message, .success([managedObjects(below: object.path)]), outSignature: "a{oa{sa{sv}}}")
        default:
            if !dispatchMethod(call, message, object) { args.closeFileDescriptors() }
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }

    /// Runs the method's handler; returns false when the call was refused before reaching it
    /// (so the caller closes any fds in its arguments).
    private func dispatchMethod(_ call: DBusMethodCall, _ message: DBusMessageHandle, _ object: DBusObject) -> Bool {
        let candidates = call.interface.map { name in object.interface(named: name).map { [$0] } ?? [] } ?? object.interfaces
        if let name = call.interface, candidates.isEmpty {
            reply(to: message, .failure(DBusError(DBusError.unknownInterface, "no interface \(name) at \(call.path)")), outSignature: nil)
            return false
        }
        guard let method = candidates.lazy.compactMap({ $0.methods[call.member] }).first else {
            reply(to: message, .failure(DBusError(DBusError.unknownMethod, "no method \(call.member) at \(call.path)")), outSignature: nil)
            return false
        }
        guard message.signature == method.inSignature else {
            reply(
                to: message,
                .failure(
                    DBusError(
                        DBusError.invalidArgs,
                        "\(call.member) takes \"\(method.inSignature)\", got \"\(message.signature)\"")), outSignature: nil)
            return false
        }
        switch method.body {
        case .immediate(let handler):
            let result: Result<[DBusValue], DBusError>
            do {
                result = .success(try handler(call))
            } catch let error as DBusError {
                result = .failure(error)
            } catch {
                result = .failure(DBusError(DBusError.failed, "\(error)"))
            }
            reply(to: message, result, outSignature: method.outSignature)
        case .deferred(let handler):
            let id = makeID()
            if !call.noReplyExpected { deferredReplies[id] = (message, method.outSignature) }
            handler(call, DBusReply(core: self, id: id))
        }
        return true
    }

    /// Completes a deferred call (from ``DBusReply``).
    func finishDeferred(_ id: UInt64, _ result: Result<[DBusValue], DBusError>) {
        guard let entry = deferredReplies.removeValue(forKey: id) else { return }
        reply(to: entry.call, result, outSignature: entry.outSignature)
    }

    /// Sends the reply to `call` unless it was flagged no-reply. A reply that does not match
    /// `outSignature` or cannot be marshalled becomes a `Failed` error reply.
    func reply(to call: DBusMessageHandle, _ result: Result<[DBusValue], DBusError>, outSignature: String?) {
        guard !call.noReply, connection != nil, !disconnected else { return }
        do {
            let reply: DBusMessageHandle
            switch result {
            case .success(let values):
                if let outSignature, values.dbusSignature != outSignature {
                    throw DBusMarshalError.signatureMismatch(expected: outSignature, actual: values.dbusSignature)
                }
                reply = try call.methodReturn()
                try reply.append(values)
            case .failure(let error):
                reply = try call.errorReply(error)
            }
            try sendNoReply(reply)
        } catch {
            logger.error("invalid reply to \(call.member ?? "?")", metadata: ["path": "\(call.path ?? "?")", "error": "\(error)"])
            if let fallback = try? call.errorReply(DBusError(DBusError.failed, "\(error)")) {
                try? sendNoReply(fallback)
            }
        }
    }
}

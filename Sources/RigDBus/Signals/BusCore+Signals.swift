import CDBus

extension BusCore {
    static let busName: String = DBUS_SERVICE_DBUS
    static let busPath: String = DBUS_PATH_DBUS

    /// The connection's filter (`dbus_connection_add_filter`): sees every incoming message
    /// before the object tree, and routes signals to subscriptions.
    func filter(_ raw: OpaquePointer) {
        let type = dbus_message_get_type(raw)
        if type == DBUS_MESSAGE_TYPE_METHOD_RETURN || type == DBUS_MESSAGE_TYPE_ERROR {
            // Replies to our pending calls never reach filters: this one answers nothing.
            strayReplies += 1
            logger.debug("reply to no pending call", metadata: ["serial": "\(dbus_message_get_reply_serial(raw))"])
            return
        }
        guard type == DBUS_MESSAGE_TYPE_SIGNAL else { return }
        let message = DBusMessageHandle(retaining: raw)
        guard let path = message.path, let interface = message.interface, let member = message.member else { return }
        if interface == DBUS_INTERFACE_LOCAL && member == "Disconnected" {
            handleDisconnected()
            return
        }
        if message.sender == Self.busName, interface == Self.busName, member == "NameOwnerChanged" {
            noteOwnerChange(message)
        }
        guard !subscriptions.isEmpty else { return }
        let args: [DBusValue]
        do {
            args = try message.read()
        } catch {
            logger.warning("dropping undecodable signal", metadata: ["member": "\(member)", "error": "\(error)"])
            return
        }
        let signal = DBusSignal(sender: message.sender, path: path, interface: interface, member: member, args: args)
        for subscription in subscriptions.values {
            let owner = subscription.rule.wellKnownSender.flatMap { nameOwners[$0] }
            if subscription.rule.matches(signal, owner: owner) {
                subscription.continuation.yield(signal)
            }
        }
    }

    private func noteOwnerChange(_ message: DBusMessageHandle) {
        guard let args = try? message.read(expecting: "sss"),
            let name = args[0].string, let newOwner = args[2].string, watchedNames[name] != nil
        else { return }
        nameOwners[name] = newOwner.isEmpty ? nil : newOwner
    }

    private func handleDisconnected() {
        guard !disconnected else { return }
        disconnected = true
        logger.warning("D-Bus connection lost")
        finishSubscriptions()
        deferredReplies = [:]
    }

    func finishSubscriptions() {
        let all = subscriptions.values
        subscriptions = [:]
        for subscription in all { subscription.continuation.finish() }
    }

    /// Registers a subscription locally; returns its id and, when its well-known sender is not
    /// tracked yet, the name whose owner must now be watched.
    func addSubscription(_ subscription: SignalSubscription) throws -> (id: UInt64, watchName: String?) {
        guard connection != nil, !disconnected else { throw unavailableError }
        let id = makeID()
        subscriptions[id] = subscription
        var watchName: String?
        if let name = subscription.rule.wellKnownSender {
            let count = watchedNames[name, default: 0]
            watchedNames[name] = count + 1
            if count == 0 { watchName = name }
        }
        return (id, watchName)
    }

    /// Drops a subscription and sends `RemoveMatch` (no reply awaited).
    func removeSubscription(_ id: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        subscription.continuation.finish()
        sendBusCall("RemoveMatch", subscription.rule.matchString)
        if let name = subscription.rule.wellKnownSender, let count = watchedNames[name] {
            if count <= 1 {
                watchedNames[name] = nil
                nameOwners[name] = nil
                sendBusCall("RemoveMatch", Self.ownerRule(name).matchString)
            } else {
                watchedNames[name] = count - 1
            }
        }
    }

    static func ownerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(
            sender: busName, path: busPath, interface: busName,
            member: "NameOwnerChanged", arg0: name)
    }

    /// Fire-and-forget call to the bus daemon with one string argument.
    private func sendBusCall(_ method: String, _ argument: String) {
        do {
            let message = try DBusMessageHandle.methodCall(
                destination: Self.busName, path: Self.busPath,
                interface: Self.busName, method: method)
            try message.append([.string(argument)])
            message.setNoReply()
            try sendNoReply(message)
        } catch {
            logger.debug("cannot send \(method)", metadata: ["error": "\(error)"])
        }
    }

    /// Asks the bus for `name`'s owner and records it on the bus thread, in order with the
    /// `NameOwnerChanged` signals around the reply.
    func resolveOwner(_ name: String, continuation: CheckedContinuation<[DBusValue], any Error>) {
        do {
            let message = try DBusMessageHandle.methodCall(
                destination: Self.busName, path: Self.busPath,
                interface: Self.busName, method: "GetNameOwner")
            try message.append([.string(name)])
            startCall(message, timeoutMilliseconds: 25_000, expecting: "s", continuation: continuation) { core, result in
                guard core.watchedNames[name] != nil else { return }
                if case .success(let args) = result, let owner = args.first?.string {
                    core.nameOwners[name] = owner
                } else {
                    core.nameOwners[name] = nil
                }
            }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}

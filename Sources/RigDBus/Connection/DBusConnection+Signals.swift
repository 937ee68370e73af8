extension DBusConnection {
    /// Subscribes to signals matching `rule` and returns them as a stream.
    ///
    /// Sends `AddMatch` asynchronously and returns only after the bus accepted it, so every
    /// matching signal emitted after this returns is delivered (subscribe before the first
    /// `GetManagedObjects`). The stream buffers without bound and is consumed by one task;
    /// cancelling that task or dropping the stream removes the match (`RemoveMatch`). It
    /// finishes when the connection is closed or lost.
    public func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusSignal> {
        try rule.validate()
        let (stream, continuation) = AsyncStream.makeStream(of: DBusSignal.self, bufferingPolicy: .unbounded)
        let subscription = SignalSubscription(rule: rule, continuation: continuation)
        let (id, watchName) = try await perform { core in try core.addSubscription(subscription) }
        let core = self.core
        continuation.onTermination = { _ in
            core.submit { $0.removeSubscription(id) }
        }
        do {
            if let watchName {
                try await addMatch(BusCore.ownerRule(watchName))
                _ = try? await startCall { core, continuation in core.resolveOwner(watchName, continuation: continuation) }
            }
            try await addMatch(rule)
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    /// `org.freedesktop.DBus.AddMatch`, awaited (never `dbus_bus_add_match`, which blocks).
    func addMatch(_ rule: DBusMatchRule) async throws {
        _ = try await call(
            destination: BusCore.busName, path: Self.busPath, interface: BusCore.busName,
            method: "AddMatch", args: [.string(rule.matchString)], expecting: "")
    }
}

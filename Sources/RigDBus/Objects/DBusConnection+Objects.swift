extension DBusConnection {
    /// Exports `object` (`dbus_connection_try_register_object_path`). Its handlers run on the
    /// bus thread from now on. Throws ``DBusConnectionError/pathInUse(_:)`` if the path is
    /// taken, ``DBusMarshalError`` for an invalid path, name or signature.
    public func export(_ object: DBusObject) async throws {
        try await perform { core in try core.export(object) }
    }

    /// Stops exporting the object at `path` (`dbus_connection_unregister_object_path`).
    public func unexport(path: String) async throws {
        try await perform { core in try core.unexport(path: path) }
    }
}

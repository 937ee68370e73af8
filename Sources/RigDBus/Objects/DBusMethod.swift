/// A method of an exported interface.
///
/// Handlers run on the connection's bus thread, so they must return quickly and never block
/// (the bus thread also serves every other object). The arguments are checked against
/// `inSignature` before the handler runs (`InvalidArgs` otherwise) and replies against
/// `outSignature`. A handler throwing ``DBusError`` replies with that error; any other error
/// replies `org.freedesktop.DBus.Error.Failed`. A call flagged no-reply gets no reply at all.
public struct DBusMethod: Sendable {
    public var inSignature: String
    public var outSignature: String
    let body: Body

    enum Body: Sendable {
        case immediate(@Sendable (DBusMethodCall) throws -> [DBusValue])
        case deferred(@Sendable (DBusMethodCall, DBusReply) -> Void)
    }

    /// A method that replies with the handler's return values.
    public init(
        in inSignature: String = "", out outSignature: String = "",
        _ handler: @escaping @Sendable (DBusMethodCall) throws -> [DBusValue]
    ) {
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.body = .immediate(handler)
    }

    /// A method that replies later, from any thread, through the ``DBusReply`` it is given.
    public static func deferred(
        in inSignature: String = "", out outSignature: String = "",
        _ handler: @escaping @Sendable (DBusMethodCall, DBusReply) -> Void
    ) -> DBusMethod {
        DBusMethod(inSignature: inSignature, outSignature: outSignature, body: .deferred(handler))
    }

    private init(inSignature: String, outSignature: String, body: Body) {
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.body = body
    }
}

/// One live ``DBusConnection/signals(matching:)`` stream, kept on the bus thread.
struct SignalSubscription {
    var rule: DBusMatchRule
    var continuation: AsyncStream<DBusSignal>.Continuation
}

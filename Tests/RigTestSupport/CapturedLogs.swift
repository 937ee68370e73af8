import Logging
import Synchronization

/// A swift-log handler that keeps messages for assertions.
public final class CapturedLogs: Sendable {
    public init() {}

    private let messages = Mutex<[String]>([])

    public var all: [String] { messages.withLock { $0 } }

    public var logger: Logger {
        Logger(label: "rig.test") { _ in Handler(store: self) }
    }

    fileprivate func append(_ message: String) { messages.withLock { $0.append(message) } }

    private struct Handler: LogHandler {
        let store: CapturedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            store.append("\(event.level): \(event.message)")
        }
    }
}

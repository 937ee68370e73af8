import Logging
import Synchronization

/// A swift-log handler that keeps messages for assertions.
final class CapturedLogs: Sendable {
    private let messages = Mutex<[String]>([])

    var all: [String] { messages.withLock { $0 } }

    var logger: Logger {
        Logger(label: "rig.blecontrol.test") { _ in Handler(store: self) }
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

import RigCore
import RigFormat

/// A rig's `"group"` section: where its group's broker is, its name there, and the file
/// with its broker credentials (a path relative to the rig file, mode 0600: the password
/// itself never goes in the rig file or on a command line).
///
/// ```json
/// "group": {"broker": "mqtts://10.0.0.2:8883", "name": "f1", "credentials": "mqtt-f1.json"}
/// ```
public struct GroupConfig: Sendable, Equatable {
    public var broker: String?
    public var name: String?
    /// The credentials file, resolved against the rig file's folder.
    public var credentials: String?

    public init(broker: String? = nil, name: String? = nil, credentials: String? = nil) {
        self.broker = broker
        self.name = name
        self.credentials = credentials
    }

    /// The section read and checked (nil section: all nil). A bad broker address or name
    /// is a `file:line:column` error at its value.
    public static func parse(_ section: ConfigSection?) throws(FileError) -> GroupConfig {
        guard let section else { return GroupConfig() }
        let object = try section.reader.object()
        var config = GroupConfig()
        if let value = object.optional("broker") {
            let text = try value.nonEmptyString()
            if case .failure(let problem) = BrokerAddress.parse(text) { throw value.error(problem.description) }
            config.broker = text
        }
        if let value = object.optional("name") {
            let text = try value.nonEmptyString()
            if let problem = GroupTopics.problem(name: text, what: "name") { throw value.error(problem) }
            config.name = text
        }
        if let value = object.optional("credentials") {
            let path = try value.nonEmptyString()
            config.credentials = path.hasPrefix("/") ? path : directory(of: section.file) + path
        }
        try object.finish()
        return config
    }

    /// `a/b/rig.json` → `a/b/`; a bare name → "" (the working directory).
    private static func directory(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "" }
        return String(file[...slash])
    }
}

import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime

/// The phones `rig pair` bonded: the only centrals whose writes the Cascable peripheral
/// takes. The file is `paired-phones.json` in the state directory (`StateDirectory`),
/// replaced atomically (`AtomicFile`):
///
/// ```json
/// { "phones": [ { "address": "AA:BB:CC:DD:EE:FF", "adapter": "hci0", "name": "iPhone" } ] }
/// ```
///
/// A missing file is an empty list (no phone paired: every write is refused). A file that
/// is not that shape is an error naming the file, the place and what is wrong: the rig
/// refuses to start rather than guess who may press its buttons.
public struct PairedPhones: Sendable {
    public struct Phone: Sendable, Equatable {
        /// The phone's identity address (`Device1.Address` once bonded).
        public var address: String
        /// The adapter the bond belongs to (`hci0`, …).
        public var adapter: String
        /// What the phone called itself, for `rig pair --list`.
        public var name: String?
        /// Other addresses BlueZ showed the same bonded phone under in its object path
        /// (a resolvable private address seen before the identity address was known).
        public var seenAs: [String]

        public init(address: String, adapter: String, name: String? = nil, seenAs: [String] = []) {
            self.address = address.uppercased()
            self.adapter = adapter
            self.name = name
            self.seenAs = seenAs.map { $0.uppercased() }.filter { $0 != address.uppercased() }
        }

        /// True when `address` is this phone.
        public func matches(_ address: String) -> Bool {
            let wanted = address.uppercased()
            return wanted == self.address || seenAs.contains(wanted)
        }
    }

    public static let fileName = "paired-phones.json"
    public let filePath: String

    public init(directory: String) {
        filePath = (directory.hasSuffix("/") ? directory : directory + "/") + Self.fileName
    }

    /// The list in the default state directory; nil when there is none (no `HOME`, no
    /// `XDG_STATE_HOME`).
    public static func inDefaultDirectory() -> PairedPhones? {
        StateDirectory.default().map { PairedPhones(directory: $0) }
    }

    /// The phones in the file; empty when the file does not exist.
    public func load() throws(FileError) -> [Phone] {
        guard FileManager.default.fileExists(atPath: filePath) else { return [] }
        let text = try RigFileReader.readText(filePath)
        let root: JSONNode
        do throws(JSONSyntaxError) { root = try JSONParser.parse(text) } catch {
            throw error.fileError(file: filePath)
        }
        let object = try ValueReader(root, JSONContext(file: filePath)).object()
        var phones: [Phone] = []
        for entry in try object.required("phones", "the list of paired phones").array() {
            let phone = try entry.object()
            let address = try phone.required("address").bluetoothAddress()
            let adapter = try phone.optional("adapter")?.adapterName() ?? "hci0"
            let name = try phone.optional("name")?.string()
            var seenAs: [String] = []
            if let list = phone.optional("seenAs") {
                for other in try list.array() { seenAs.append(try other.bluetoothAddress()) }
            }
            try phone.finish()
            phones.append(Phone(address: address, adapter: adapter, name: name, seenAs: seenAs))
        }
        try object.finish()
        return phones
    }

    /// Adds `phone` (replacing an entry with the same address) and saves the list.
    public func add(_ phone: Phone) throws {
        var phones = try load()
        phones.removeAll { $0.address == phone.address }
        phones.append(phone)
        try save(phones)
    }

    /// Removes the phone with `address` (its identity address or one it was seen as);
    /// returns what was removed (nil: it was not on the list).
    @discardableResult
    public func remove(address: String) throws -> Phone? {
        var phones = try load()
        guard let index = phones.firstIndex(where: { $0.matches(address) }) else { return nil }
        let removed = phones.remove(at: index)
        try save(phones)
        return removed
    }

    func save(_ phones: [Phone]) throws {
        try AtomicFile.write(Self.encode(phones), to: filePath, createDirectory: true)
    }

    static func encode(_ phones: [Phone]) -> String {
        let entries = phones.map { phone in
            var fields = ["\"address\": \(quoted(phone.address))", "\"adapter\": \(quoted(phone.adapter))"]
            if let name = phone.name { fields.append("\"name\": \(quoted(name))") }
            if !phone.seenAs.isEmpty { fields.append("\"seenAs\": [\(phone.seenAs.map(quoted).joined(separator: ", "))]") }
            return "    { " + fields.joined(separator: ", ") + " }"
        }
        return "{\n  \"phones\": [\n" + entries.joined(separator: ",\n") + (entries.isEmpty ? "" : "\n") + "  ]\n}\n"
    }

    private static func quoted(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

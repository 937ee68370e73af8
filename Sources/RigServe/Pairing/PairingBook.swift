import Dispatch
import FoundationEssentials
import Glibc
import RigCore
import RigFormat
import RigRuntime
import Synchronization
import SystemPackage

/// A phone that exchanged a pairing code for its cookie.
public struct PairedPhone: Codable, Sendable, Equatable {
    /// 8 hex digits, made at pairing.
    public var id: String
    /// From the phone's User-Agent ("Android Chrome") or as entered on the page.
    public var name: String
    /// SHA-256 of the cookie's secret, as hex: the secret itself is kept by the phone only.
    public var secretSHA256: String
    public var created: Date
    public var lastSeen: Date
}

/// Why the pairing file could not be read, written or changed.
public struct PairingError: Error, Sendable, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The phones paired with `rig serve` and the pairing codes not yet used, in
/// `serve-paired.json` in the state directory (mode 0600). Every change is a read, change
/// and atomic write (`AtomicFile`) under an exclusive `flock` of `serve-paired.lock`, so a
/// running server, `rig serve --revoke` and `rig serve --pair` never undo each other.
///
/// A running server rereads the file whenever it changed (its inode, size or time, looked
/// at on every check: one `stat`), so a phone revoked by `rig serve --revoke` is refused
/// from its next request, and a code made by `rig serve --pair` works at once.
public final class PairingBook: @unchecked Sendable {
    /// How long a code can be used.
    public static let codeLifetime: TimeInterval = 600
    /// How often at most a phone's last-seen time is written.
    public static let lastSeenResolution: TimeInterval = 600
    /// The cookie the phone keeps (Max-Age: a year).
    public static let cookieName = "rig_paired"
    public static let cookieMaxAge = 365 * 24 * 3600
    /// The code's symbols: no 0/O, 1/I/L to confuse.
    static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")
    static let codeLength = 8

    public let path: String
    let lockPath: String
    private let lock = Mutex<Void>(())
    /// The file as last read, and what identified it then.
    private var cached: (key: FileKey?, file: Contents) = (nil, Contents())
    /// Last-seen times not yet written.
    private var seen: [String: Date] = [:]
    private var writePending = false
    private let writer = DispatchQueue(label: "rig.serve.paired")

    struct FileKey: Equatable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    struct Code: Codable, Equatable {
        var codeSHA256: String
        var expires: Date
    }

    struct Contents: Codable, Equatable {
        var version = 1
        var phones: [PairedPhone] = []
        var codes: [Code] = []
    }

    /// - Parameter directory: the state directory (made, mode 0700, on the first change).
    public init(directory: String) {
        path = directory + "/serve-paired.json"
        lockPath = directory + "/serve-paired.lock"
    }

    // MARK: Codes

    /// A new code, good once for `codeLifetime` from `now`, written to the file (expired
    /// codes are dropped). Shown as `ABCD-EFGH`; `normalized` accepts it with or without the
    /// dash, in either case.
    public func issueCode(now: Date = Date()) throws(PairingError) -> String {
        var generator = SystemRandomNumberGenerator()
        let code = String((0..<Self.codeLength).map { _ in Self.alphabet[Int.random(in: 0..<Self.alphabet.count, using: &generator)] })
        try modify { contents in
            contents.codes.removeAll { $0.expires <= now }
            contents.codes.append(Code(codeSHA256: Self.sha256(code), expires: now.addingTimeInterval(Self.codeLifetime)))
        }
        return code
    }

    /// `abcd-efgh`, ` ABCDEFGH ` → `ABCDEFGH`; nil when it cannot be a code.
    public static func normalized(_ text: String) -> String? {
        let code = String(text.uppercased().filter { $0 != "-" && $0 != " " })
        guard code.count == codeLength, code.allSatisfy({ alphabet.contains($0) }) else { return nil }
        return code
    }

    /// `ABCDEFGH` → `ABCD-EFGH`, easier to type.
    public static func shown(_ code: String) -> String {
        code.count == codeLength ? String(code.prefix(4)) + "-" + String(code.suffix(4)) : code
    }

    /// Uses `code` once: when it is one of the file's unexpired codes, removes it and pairs a
    /// phone named `name`, returning the phone and the cookie's secret (256 random bits as
    /// hex, kept only as its hash). Nil for a wrong, used or expired code. Every stored code
    /// is compared (by hash, in constant time), whichever matches.
    public func redeem(code text: String, name: String, now: Date = Date()) throws(PairingError) -> (phone: PairedPhone, secret: String)? {
        guard let code = Self.normalized(text) else { return nil }
        let hash = Self.sha256(code)
        let secret = Secret.hex(bytes: 32)
        return try modify { contents -> (phone: PairedPhone, secret: String)? in
            contents.codes.removeAll { $0.expires <= now }
            var match: Int?
            for (index, stored) in contents.codes.enumerated() where Secret.equal(stored.codeSHA256, hash) { match = index }
            guard let match else { return nil }
            contents.codes.remove(at: match)
            var id = Secret.hex(bytes: 4)
            while contents.phones.contains(where: { $0.id == id }) { id = Secret.hex(bytes: 4) }
            let phone = PairedPhone(
                id: id, name: Self.cleanName(name), secretSHA256: Self.sha256(secret), created: now, lastSeen: now)
            contents.phones.append(phone)
            return (phone: phone, secret: secret)
        }
    }

    // MARK: Phones

    /// The paired phone whose cookie carries `secret`, or nil (never paired, or revoked: the
    /// file is reread when it changed). Notes when it was seen.
    public func phone(presenting secret: some StringProtocol, now: Date = Date()) -> PairedPhone? {
        guard secret.utf8.count == 64 else { return nil }
        let hash = Self.sha256(String(secret))
        return lock.withLock { _ -> PairedPhone? in
            refreshLocked()
            var found: PairedPhone?
            for phone in cached.file.phones where Secret.equal(phone.secretSHA256, hash) { found = phone }
            guard let found else { return nil }
            seen[found.id] = now
            if now.timeIntervalSince(found.lastSeen) >= Self.lastSeenResolution, !writePending {
                writePending = true
                scheduleLastSeenWrite()
            }
            return found
        }
    }

    /// The paired phones, as the file has them.
    public func phones() throws(PairingError) -> [PairedPhone] {
        try read().phones
    }

    /// Removes the phones `selector` names: `all`, an id, or a name (every phone of that
    /// name). Returns those removed (none: nothing matched, and nothing changed).
    public func revoke(_ selector: String) throws(PairingError) -> [PairedPhone] {
        try modify { contents in
            let removed = contents.phones.filter { selector == "all" || $0.id == selector || $0.name == selector }
            contents.phones.removeAll { phone in removed.contains { $0.id == phone.id } }
            return removed
        }
    }

    /// Writes the last-seen times noted since the last write (tests call it to wait).
    public func flushLastSeen() {
        writer.sync {}
    }

    private func scheduleLastSeenWrite() {
        writer.async { [self] in
            let pending = lock.withLock { _ in
                writePending = false
                return seen
            }
            _ = try? modify { contents in
                for index in contents.phones.indices {
                    if let time = pending[contents.phones[index].id], time > contents.phones[index].lastSeen {
                        contents.phones[index].lastSeen = time
                    }
                }
            }
        }
    }

    // MARK: The file

    static func sha256(_ text: String) -> String {
        SHA256.hex(Array(text.utf8))
    }

    /// A name as people write it, without control characters, at most 40 characters.
    static func cleanName(_ name: String) -> String {
        let kept = String(String.UnicodeScalarView(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
            .trimmed()
        return kept.isEmpty ? "a phone" : String(kept.prefix(40))
    }

    /// "Android Chrome", "iPhone Safari", … from a User-Agent.
    public static func name(fromUserAgent agent: String?) -> String {
        guard let agent else { return "a browser" }
        let device =
            ["iPhone", "iPad", "Android", "Macintosh", "Windows", "CrOS", "Linux"].first { agent.contains($0) }
            .map { $0 == "Macintosh" ? "Mac" : $0 == "CrOS" ? "Chromebook" : $0 } ?? "a browser"
        let browser =
            [
                ("Firefox", "Firefox"), ("FxiOS", "Firefox"), ("EdgA", "Edge"), ("Edg/", "Edge"), ("SamsungBrowser", "Samsung Internet"),
                ("CriOS", "Chrome"), ("Chrome", "Chrome"), ("Safari", "Safari"),
            ]
            .first { agent.contains($0.0) }?.1
        return browser.map { "\(device) \($0)" } ?? device
    }

    /// Reads the file (missing: empty), under the lock's shared mode.
    func read() throws(PairingError) -> Contents {
        try Self.decode(path: path)
    }

    static func decode(path: String) throws(PairingError) -> Contents {
        guard FileManager.default.fileExists(atPath: path) else { return Contents() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PairingError("cannot read \(path) (permissions?)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let contents = try decoder.decode(Contents.self, from: data)
            guard contents.version == 1 else {
                throw PairingError("\(path): version \(contents.version) of the paired-phones file is not one this rig reads (1)")
            }
            return contents
        } catch let error as PairingError {
            throw error
        } catch {
            throw PairingError(
                "\(path): not a rig serve paired-phones file (\(Self.reason(error))); fix it, or delete it to forget every paired phone")
        }
    }

    private static func reason(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let c): "\(where_(c.codingPath)) has no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c), DecodingError.dataCorrupted(let c):
            "\(where_(c.codingPath)): \(c.debugDescription)"
        default: "\(error)"
        }
    }

    private static func where_(_ path: [CodingKey]) -> String {
        "$" + path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    /// Read, change, write, under an exclusive lock of the lock file.
    @discardableResult
    func modify<T>(_ change: (inout Contents) throws(PairingError) -> T) throws(PairingError) -> T {
        let directory = FilePath(path).removingLastComponent().string
        if !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw PairingError("cannot create \(directory): \(errorText(error))")
            }
        }
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw PairingError("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw PairingError("cannot lock \(lockPath): \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        var contents = try Self.decode(path: path)
        let before = contents
        let result = try change(&contents)
        if contents != before {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data: Data
            do { data = try encoder.encode(contents) } catch { throw PairingError("cannot encode the paired phones: \(error)") }
            do {
                try AtomicFile.write(Array(data) + [0x0A], to: path, permissions: [.ownerReadWrite])
            } catch {
                throw PairingError("\(error)")
            }
            Self.giveToDirectoryOwner([path, lockPath], directory: directory)
        }
        lock.withLock { _ in refreshLocked() }
        return result
    }

    /// `sudo rig serve --revoke …` runs as root: the files stay the state directory's
    /// owner's (the `rig` user's, whose server must read them).
    private static func giveToDirectoryOwner(_ paths: [String], directory: String) {
        guard geteuid() == 0 else { return }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_uid != 0 else { return }
        for path in paths { _ = chown(path, info.st_uid, info.st_gid) }
    }

    /// Rereads the file when it is not the one last read. A file that cannot be read
    /// pairs no phone (the token still works).
    private func refreshLocked() {
        let key = Self.key(path)
        guard key != cached.key || key == nil else { return }
        let file = (try? Self.decode(path: path)) ?? Contents()
        cached = (key, file)
    }

    private static func key(_ path: String) -> FileKey? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileKey(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size), seconds: info.st_mtim.tv_sec,
            nanoseconds: info.st_mtim.tv_nsec)
    }
}

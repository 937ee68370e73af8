import FoundationEssentials
import Glibc
import RigFormat
import RigRuntime
import SystemPackage

/// The secret a phone presents on a non-loopback listener: 32 random bytes from the
/// kernel, as 64 hex digits, kept in a file only its owner can read.
public struct AccessToken: Sendable, Equatable {
    /// 64 lowercase hex digits.
    public let text: String

    public init?(text: String) {
        let t = text.trimmed()
        guard t.utf8.count == 64, t.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else { return nil }
        self.text = t
    }

    /// Why a token could not be read or made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// 32 bytes from the kernel's CSPRNG (`SystemRandomNumberGenerator` is getrandom(2)
    /// on Linux).
    public static func generate() throws(Failure) -> AccessToken {
        guard let token = AccessToken(text: Secret.hex(bytes: 32)) else { throw Failure(description: "token encoding failed") }
        return token
    }

    /// Reads the token in `path`, or makes one and saves it there (mode 0600, replaced
    /// atomically) if the file does not exist. `created` tells the caller to print it.
    public static func loadOrCreate(path: String) throws(Failure) -> (token: AccessToken, created: Bool) {
        if FileManager.default.fileExists(atPath: path) {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Failure(description: "cannot read the token file \(path) (permissions?)")
            }
            guard let token = AccessToken(text: String(decoding: data, as: UTF8.self)) else {
                throw Failure(description: "\(path): not a rig serve token (64 hex digits); delete it to make a new one")
            }
            if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let mode = attributes[.posixPermissions] as? UInt, mode & 0o077 != 0
            {
                throw Failure(description: "\(path) can be read by others (mode \(String(mode, radix: 8))); chmod 600 it or delete it to make a new one")
            }
            return (token, false)
        }
        let token = try generate()
        let directory = FilePath(path).removingLastComponent().string
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure(description: "cannot create \(directory): \(errorText(error))")
            }
        }
        do {
            try AtomicFile.write(token.text + "\n", to: path, permissions: [.ownerReadWrite])
        } catch {
            throw Failure(description: "cannot save the token: \(error)")
        }
        return (token, true)
    }

    /// Compares in time that depends only on the length, not on where `candidate` first
    /// differs, so the token cannot be guessed byte by byte from response times.
    public func matches(_ candidate: Substring) -> Bool {
        Secret.equal(text, candidate)
    }
}

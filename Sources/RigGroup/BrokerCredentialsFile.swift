import FoundationEssentials
import Glibc
import RigFormat
import RigRuntime

extension BrokerCredentials {
    /// Reads `{"username": …, "password": …, "caFile": …}` (each optional) from a file
    /// only its owner may read (mode 0600 or 0400): a password never goes on the command
    /// line. A malformed file is a `FileError` (file:line:column, the JSON path, what is
    /// valid); a file others may read is refused as a `GroupSetupError`.
    public static func read(path: String) throws -> BrokerCredentials {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw GroupSetupError("\(path): cannot read the broker credentials: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw GroupSetupError(
                "\(path): the broker credentials may be read by others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 \(path)")
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw GroupSetupError("\(path): cannot read the broker credentials: \(errorText(error))")
        }
        let root: JSONNode
        do { root = try JSONParser.parse(text) } catch { throw error.fileError(file: path) }
        let object = try ValueReader(root, JSONContext(file: path)).object()
        let credentials = BrokerCredentials(
            username: try object.optional("username")?.nonEmptyString(), password: try object.optional("password")?.string(),
            caFile: try object.optional("caFile")?.nonEmptyString())
        try object.finish()
        return credentials
    }
}

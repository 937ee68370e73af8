import RigFormat

/// One line of a shot log (JSON Lines, one object per line, keyed by `"event"`).
///
/// The log is written by `rig play` for every stepped program and read back by
/// `--resume` and `rig export`. Steps are 1-based, as `rig` prints them.
public enum ShotLogEvent: Sendable, Equatable {
    case start(ShotLogStart)
    case shot(ShotLogShot)
    case missed(ShotLogMissed)
    case warning(ShotLogWarning)
    case end(ShotLogEnd)
    case image(ShotLogImage)

    public static let eventNames = ["start", "shot", "missed", "warning", "end", "image"]

    /// The event as one line of JSON, without the line break.
    public func jsonLine() -> String {
        switch self {
        case .start(let e): e.jsonLine()
        case .shot(let e): e.jsonLine()
        case .missed(let e): e.jsonLine()
        case .warning(let e): e.jsonLine()
        case .end(let e): e.jsonLine()
        case .image(let e): e.jsonLine()
        }
    }

    /// Reads one line of a log. Errors name `file:lineNumber:column` and the JSON path.
    public static func decode(line: String, file: String, lineNumber: Int) throws(FileError) -> ShotLogEvent {
        do throws(FileError) {
            let node: JSONNode
            do { node = try JSONParser.parse(line) } catch { throw error.fileError(file: file) }
            let object = try ValueReader(node, JSONContext(file: file)).object()
            let kind = try object.required("event", "one of \(eventNames.joined(separator: ", "))").oneOf(eventNames)
            switch kind {
            case "start": return .start(try ShotLogStart(reading: object))
            case "shot": return .shot(try ShotLogShot(reading: object))
            case "missed": return .missed(try ShotLogMissed(reading: object))
            case "warning": return .warning(try ShotLogWarning(reading: object))
            case "image": return .image(try ShotLogImage(reading: object))
            default: return .end(try ShotLogEnd(reading: object))
            }
        } catch {
            // The parser saw a one-line document: put the error on the log's line.
            var moved = error
            moved.location.line = lineNumber
            throw moved
        }
    }
}

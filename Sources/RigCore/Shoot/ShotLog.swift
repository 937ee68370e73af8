import RigFormat

/// A shot log read back: its events, in order, and what `--resume` and `rig export` ask of it.
///
/// The writer flushes after every event, so a crash or a power cut can leave at most a
/// torn last line (no line break at its end): that line is dropped and reported in
/// `tornLastLine`, even when what is left of it reads as a whole event (only its line break
/// was lost), as the next writer cuts it off into `LOG.torn`: a reader and the writer
/// agree on which events the log holds. Any other malformed line is an error.
public struct ShotLog: Sendable, Equatable {
    public var events: [ShotLogEvent]
    /// The unterminated last line that could not be read, if any.
    public var tornLastLine: String?

    public init(events: [ShotLogEvent], tornLastLine: String? = nil) {
        self.events = events
        self.tornLastLine = tornLastLine
    }

    /// Parses the text of a log file; `file` is the path for error messages.
    public init(text: String, file: String) throws(FileError) {
        events = []
        tornLastLine = nil
        // "\r\n" is one Character in Swift: split on both, so a log whose line endings an
        // editor turned into CRLF reads like the original.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        let terminated = lines.last?.isEmpty ?? true
        if terminated, !lines.isEmpty { lines.removeLast() }
        for (index, raw) in lines.enumerated() {
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            // Unterminated: the write was cut, perhaps just before its line break. The event
            // is not known to be whole (the writer moves it to LOG.torn): not a shot.
            if !terminated, index == lines.count - 1 {
                tornLastLine = String(line)
                continue
            }
            events.append(try ShotLogEvent.decode(line: String(line), file: file, lineNumber: index + 1))
        }
        guard let first = events.first else { return }
        if case .start = first { return }
        throw FileError(
            file: file, location: SourceLocation(line: firstEventLine(in: lines), column: 1), path: "$.event",
            message: "a shot log starts with a \"start\" event; valid: {\"event\":\"start\",\"program\":…,\"programSha256\":…,\"steps\":N}")
    }

    /// The text of the log, one line per event, each ending in a line break.
    public var text: String {
        events.map { $0.jsonLine() + "\n" }.joined()
    }

    /// The last `start` event: the program, its hash and step count of the latest run.
    public var lastStart: ShotLogStart? {
        for event in events.reversed() { if case .start(let s) = event { return s } }
        return nil
    }

    /// Every take the camera made, in order (redos and interrupted shots included): the
    /// camera numbered each one.
    public var shots: [ShotLogShot] {
        events.compactMap { if case .shot(let s) = $0, s.rig == nil { s } else { nil } }
    }

    /// A group's log (the leader's): every rig's frames, the followers' (`rig` set) included.
    public var groupShots: [ShotLogShot] {
        events.compactMap { if case .shot(let s) = $0 { s } else { nil } }
    }

    /// The shots that finished (not `interrupted`), in the order taken.
    public var completeShots: [ShotLogShot] {
        shots.filter { !$0.interrupted }
    }

    /// The last shot that finished, whichever run took it.
    public var lastShot: ShotLogShot? {
        for event in events.reversed() { if case .shot(let s) = event, s.rig == nil, !s.interrupted { return s } }
        return nil
    }

    /// How the latest run ended; nil if it did not (a crash, kill -9) or has not yet.
    public var lastRunEnd: ShotLogEnd? {
        for event in events.reversed() {
            switch event {
            case .end(let e): return e
            case .start: return nil
            default: continue
            }
        }
        return nil
    }

    /// True when the latest run shot every step: nothing left to resume.
    public var isFinished: Bool { lastRunEnd?.reason == .done }

    /// Whether `step` (1-based) has all its frames: any complete shot when the program takes
    /// one per step, a shot without a bracket index (a run without a camera holds each step
    /// once), or complete shots of every frame 1…`framesPerStep` of its bracket.
    public func isComplete(step: Int, framesPerStep: Int) -> Bool {
        var frames: Set<Int> = []
        for shot in completeShots where shot.step == step {
            guard let bracket = shot.bracket, framesPerStep > 1 else { return true }
            frames.insert(bracket)
        }
        return (1...max(1, framesPerStep)).allSatisfy(frames.contains)
    }

    /// The step a resumed run starts at (1-based): the last shot's step when it lacks a
    /// frame (a bracket, or `shotsPerStep`, cut short: the whole step is shot again), else
    /// the one after it; step 1 when nothing was shot. Past the last step when the last
    /// step has all its frames.
    public func resumeStep(framesPerStep: Int = 1) -> Int {
        guard let last = lastShot else { return 1 }
        return isComplete(step: last.step, framesPerStep: framesPerStep) ? last.step + 1 : last.step
    }

    /// The shots to hand to a stitcher: the last complete shot of each (step, bracket), in
    /// the order of the step's first shot, so a redo replaces the frame it redid.
    public var finalShots: [ShotLogShot] {
        struct Key: Hashable {
            var step: Int
            var bracket: Int
        }
        var order: [Key] = []
        var latest: [Key: ShotLogShot] = [:]
        for shot in completeShots {
            let key = Key(step: shot.step, bracket: shot.bracket ?? 1)
            if latest[key] == nil { order.append(key) }
            latest[key] = shot
        }
        return order.compactMap { latest[$0] }
    }
}

private func firstEventLine(in lines: [Substring]) -> Int {
    lines.firstIndex { !$0.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" } }.map { $0 + 1 } ?? 1
}

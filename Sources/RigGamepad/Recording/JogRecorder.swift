import Glibc
import RigCore
import RigFormat
import RigRuntime
import SystemPackage

/// Keeps the recording of a jog session: applies record/delete notices, saves the
/// program file atomically after every change (so a crash never loses earlier keys),
/// and hands the current program to the preview. Runs off the loop thread.
public final class JogRecorder {
    public private(set) var recording: JogRecording
    /// Where the program is saved; nil: recording in memory only (preview still works).
    public let programPath: String?
    /// The rig file as the program names it: relative to the program file's directory.
    public let rigReference: String
    private let preview: PreviewSlot

    public init(rig: Rig, kind: JogRecording.Kind, programPath: String?, rigPath: String, preview: PreviewSlot) {
        recording = JogRecording(rig: rig, kind: kind)
        self.programPath = programPath
        self.preview = preview
        rigReference = programPath.map { Self.relativePath(to: rigPath, fromDirectoryOf: $0) } ?? rigPath
        preview.set(nil)
    }

    /// Applies a notice; returns a line for the log when something changed.
    public func handle(_ notice: JogNotice) throws(AtomicFile.WriteError) -> String? {
        switch notice {
        case .record(let pose):
            let time = recording.append(pose)
            try changed()
            let at: String
            if case .timelapse = recording.kind { at = "frame \(Int(time))" } else { at = "t=\(rounded(time))s" }
            let where_ = zip(recording.rig.axes, recording.poses[recording.count - 1]).map { "\($0.name) \(rounded($1))\($0.unit)" }
            return "key \(recording.count) at \(at): \(where_.joined(separator: ", "))"
        case .deleteLast:
            guard !recording.isEmpty else { return "nothing to delete" }
            recording.removeLast()
            try changed()
            return "deleted the last key; \(recording.count) left"
        case .save:
            try save()
            return programPath.map { "saved \(recording.count) keys to \($0)" } ?? "nothing saved: no --record file"
        default:
            return nil
        }
    }

    /// Writes the program file now (nothing without a path or keys).
    public func save() throws(AtomicFile.WriteError) {
        guard let programPath, !recording.isEmpty else { return }
        try AtomicFile.write(recording.programJSON(rigPath: rigReference), to: programPath)
    }

    private func changed() throws(AtomicFile.WriteError) {
        preview.set(recording.motion())
        try save()
    }

    /// `target` as seen from the directory holding `file` (both may be relative to the
    /// working directory).
    public static func relativePath(to target: String, fromDirectoryOf file: String) -> String {
        func absolute(_ path: String) -> [String] {
            var p = FilePath(path)
            if !p.isAbsolute {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let ok = buffer.withUnsafeMutableBufferPointer { b in
                    b.withMemoryRebound(to: CChar.self) { getcwd($0.baseAddress, $0.count) != nil }
                }
                let cwd = ok ? String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self) : "/"
                p = FilePath(cwd).pushing(p)
            }
            return p.lexicallyNormalized().components.map(\.string)
        }
        let to = absolute(target)
        let from = Array(absolute(file).dropLast())
        var common = 0
        while common < min(to.count - 1, from.count), to[common] == from[common] { common += 1 }
        let ups = [String](repeating: "..", count: from.count - common)
        return (ups + to[common...]).joined(separator: "/")
    }
}

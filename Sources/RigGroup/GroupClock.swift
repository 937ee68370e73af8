import FoundationEssentials
import Glibc
import RigFormat

/// A rig's clock as chrony sees it: how far the system clock is off true time, and the
/// error bound on that (root delay / 2 + root dispersion), or "unknown" (no chrony).
public struct ClockReport: Codable, Sendable, Equatable, CustomStringConvertible {
    /// chrony, injected (a test's `RIG_TEST_CLOCK_OFFSET_NS`), unknown.
    public var source: String
    public var offsetNs: Int64?
    public var errorNs: Int64?
    /// Why it is unknown, when it is.
    public var note: String?

    public init(source: String, offsetNs: Int64? = nil, errorNs: Int64? = nil, note: String? = nil) {
        self.source = source
        self.offsetNs = offsetNs
        self.errorNs = errorNs
        self.note = note
    }

    /// The most this clock may be off true time: |offset| + error; nil when unknown.
    public var worstNs: Int64? {
        guard let offsetNs else { return nil }
        return abs(offsetNs) + max(errorNs ?? 0, 0)
    }

    public var description: String {
        guard let offsetNs else { return "unknown (\(note ?? "no chrony"))" }
        return "offset \(Self.ms(offsetNs)) ± \(Self.ms(errorNs ?? 0)) (\(source))"
    }

    static func ms(_ ns: Int64) -> String { "\(fixed(Double(ns) / 1e6, 3)) ms" }

    /// Parses `chronyc -c tracking` (CSV: reference ID, name, stratum, reference time,
    /// system time offset, last offset, RMS offset, frequency, residual frequency, skew,
    /// root delay, root dispersion, update interval, leap status; seconds).
    public static func parseChrony(_ text: String) -> ClockReport? {
        let fields = text.split(separator: "\n").first.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
        guard fields.count >= 14, let offset = Double(fields[4]), let rootDelay = Double(fields[10]), let rootDispersion = Double(fields[11]),
            offset.isFinite, rootDelay.isFinite, rootDispersion.isFinite, abs(offset) < 1e6
        else { return nil }
        if fields[13].lowercased().contains("not synchronised") {
            return ClockReport(source: "chrony", note: "chrony is not synchronised")
        }
        // chrony's "System time": how far the system clock is from chrony's idea of true time.
        return ClockReport(
            source: "chrony", offsetNs: Int64((offset * 1e9).rounded()), errorNs: Int64(((rootDelay / 2 + rootDispersion) * 1e9).rounded()))
    }

    /// This rig's clock now: `RIG_TEST_CLOCK_OFFSET_NS` (a test's injected offset, never a
    /// real clock change), else what `tracking` (the output of `chronyc -c -n tracking`, or
    /// nil when chronyc is missing or failed, with why) says, else unknown.
    public static func current(
        environment: [String: String] = ProcessInfo.processInfo.environment, tracking: () -> Result<String, ClockReadFailure>
    ) -> ClockReport {
        if let injected = environment["RIG_TEST_CLOCK_OFFSET_NS"], let ns = Int64(injected) {
            return ClockReport(source: "injected", offsetNs: ns, errorNs: 0)
        }
        switch tracking() {
        case .failure(let why): return ClockReport(source: "unknown", note: why.reason)
        case .success(let text):
            return parseChrony(text)
                ?? ClockReport(source: "unknown", note: "chronyd is not running or not synchronised (chronyc tracking failed)")
        }
    }
}

/// Why chrony could not be asked (chronyc missing, or it failed).
public struct ClockReadFailure: Error, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}

import CGPIOD
import FoundationEssentials
import Glibc

/// The one door to libgpiod: every GPIO line rig uses (the buttons and their LEDs, the
/// camera's contacts, `rig doctor`'s look at who holds a line) goes through this file, and
/// nothing else imports CGPIOD. It speaks libgpiod 1.6's v1 API (Debian 12); libgpiod 2.x
/// (Debian 13) removed that API, and supporting it means changing this file only.
enum Libgpiod {
    /// A failed libgpiod call, with the errno it left, in words.
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ what: String) { description = "\(what) (\(String(cString: strerror(errno))))" }
    }

    /// An open chip, by name, number or path as the rig file gives it.
    final class Chip {
        private let handle: OpaquePointer
        let name: String

        init(_ name: String) throws(Failure) {
            guard let handle = gpiod_chip_open_lookup(name) else { throw Failure("no GPIO chip \"\(name)\"") }
            self.handle = handle
            self.name = name
        }

        deinit { gpiod_chip_close(handle) }

        /// Who holds `line` (its consumer's name; "the kernel" when it has none), or nil
        /// when it is free or does not exist. Requests nothing.
        func consumer(of line: Int) -> String? {
            guard line >= 0, let info = gpiod_chip_get_line(handle, UInt32(line)), gpiod_line_is_used(info) else { return nil }
            return gpiod_line_consumer(info).map { String(cString: $0) } ?? "the kernel"
        }

        /// `line` as an output at logical 0 (active-low inverted by the kernel when asked).
        func output(_ line: Int, consumer: String, activeLow: Bool, what: String) throws(Failure) -> OutputLine {
            let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
            guard line >= 0, let handle = gpiod_chip_get_line(handle, UInt32(line)),
                gpiod_line_request_output_flags(handle, consumer, flags, 0) == 0
            else { throw Failure("cannot request line \(line) of \(name) for \(what)") }
            return OutputLine(chip: self, handle: handle)
        }

        /// `line` as an input reporting both edges, with the pull-up bias (a button to ground).
        func edges(_ line: Int, consumer: String, activeLow: Bool, what: String) throws(Failure) -> EdgeLine {
            let flags = Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP) | (activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0)
            guard line >= 0, let handle = gpiod_chip_get_line(handle, UInt32(line)),
                gpiod_line_request_both_edges_events_flags(handle, consumer, flags) == 0
            else { throw Failure("cannot request line \(line) of \(name) for \(what)") }
            return EdgeLine(chip: self, handle: handle)
        }
    }

    /// A requested line: given back to the kernel by `release()` or when it goes (the
    /// chip stays open while any of its lines is held).
    class RequestedLine {
        private let chip: Chip
        fileprivate private(set) var handle: OpaquePointer?

        fileprivate init(chip: Chip, handle: OpaquePointer) {
            self.chip = chip
            self.handle = handle
        }

        deinit { release() }

        func release() {
            guard let handle else { return }
            self.handle = nil
            gpiod_line_release(handle)
        }
    }

    /// A requested output line.
    final class OutputLine: RequestedLine {
        /// Sets the logical value; fails after `release()`.
        func set(_ value: Bool) throws(Failure) {
            guard let handle else { throw Failure("the line is released") }
            guard gpiod_line_set_value(handle, value ? 1 : 0) == 0 else { throw Failure("setting the line failed") }
        }
    }

    /// A requested line that reports edges through an fd to `poll`.
    final class EdgeLine: RequestedLine {
        /// The fd that becomes readable when an edge is waiting (-1 once released).
        var fd: Int32 { handle.map { gpiod_line_event_get_fd($0) } ?? -1 }

        /// The waiting edge: rising (logical 0 → 1, after active-low) or falling, and the
        /// kernel's monotonic timestamp in seconds; nil when none could be read.
        func read() -> (rising: Bool, timeSeconds: Double)? {
            guard let handle else { return nil }
            var event = gpiod_line_event()
            guard gpiod_line_event_read(handle, &event) == 0 else { return nil }
            return (event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), Double(event.ts.tv_sec) + Double(event.ts.tv_nsec) / 1e9)
        }
    }
}

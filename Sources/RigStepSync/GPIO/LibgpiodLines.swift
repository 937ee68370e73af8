import CGPIOD
import Foundation
import RigCore

/// Buttons and LEDs through libgpiod 1.6 (v1 API): buttons as both-edge event lines with
/// the pull-up bias and active-low, LEDs as outputs. Edges are read from the lines' event
/// fds with `poll`.
public final class LibgpiodLines: GPIOLines {
    private let chip: OpaquePointer
    private let buttons: [(GPIOEdge.Button, OpaquePointer)]
    private var leds: [(GPIOEdge.Button, OpaquePointer)] = []

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public init(config: ButtonsConfig, consumer: String = "rig") throws {
        guard let chip = gpiod_chip_open_lookup(config.chip) else {
            throw Unavailable(description: "no GPIO chip \"\(config.chip)\" (\(String(cString: strerror(errno))))")
        }
        self.chip = chip
        var requested: [(GPIOEdge.Button, OpaquePointer)] = []
        let flags = Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP) | (config.activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0)
        for (button, number) in [(GPIOEdge.Button.continue, config.continueLine), (.stop, config.stopLine)] {
            guard let line = gpiod_chip_get_line(chip, UInt32(number)),
                gpiod_line_request_both_edges_events_flags(line, consumer, flags) == 0
            else {
                let reason = String(cString: strerror(errno))
                for (_, l) in requested { gpiod_line_release(l) }
                gpiod_chip_close(chip)
                throw Unavailable(description: "cannot request line \(number) of \(config.chip) for the \(button) button (\(reason))")
            }
            requested.append((button, line))
        }
        buttons = requested
        for (button, number) in [(GPIOEdge.Button.continue, config.continueLED), (.stop, config.stopLED)] {
            guard let number, let line = gpiod_chip_get_line(chip, UInt32(number)),
                gpiod_line_request_output(line, consumer, 0) == 0
            else { continue }
            leds.append((button, line))
        }
    }

    public func readEdges(timeoutSeconds: Double) throws -> [GPIOEdge] {
        var fds = buttons.map { pollfd(fd: gpiod_line_event_get_fd($0.1), events: Int16(POLLIN), revents: 0) }
        let ready = poll(&fds, nfds_t(fds.count), Int32(timeoutSeconds * 1000))
        guard ready > 0 else { return [] }
        var edges: [GPIOEdge] = []
        for (index, fd) in fds.enumerated() where fd.revents & Int16(POLLIN) != 0 {
            var event = gpiod_line_event()
            guard gpiod_line_event_read(buttons[index].1, &event) == 0 else { continue }
            let time = Double(event.ts.tv_sec) + Double(event.ts.tv_nsec) / 1e9
            edges.append(GPIOEdge(button: buttons[index].0, pressed: event.event_type == Int32(GPIOD_LINE_EVENT_RISING_EDGE), timeSeconds: time))
        }
        return edges
    }

    public func setLED(_ button: GPIOEdge.Button, on: Bool) {
        for (b, line) in leds where b == button { _ = gpiod_line_set_value(line, on ? 1 : 0) }
    }

    public func close() {
        for (_, line) in buttons + leds { gpiod_line_release(line) }
        gpiod_chip_close(chip)
    }
}

import FoundationEssentials
import Glibc
import RigCore

/// Buttons and LEDs on a GPIO chip (through `Libgpiod`): buttons as both-edge event lines
/// with the pull-up bias and active-low, LEDs as outputs. Edges are read from the lines'
/// event fds with `poll`.
public final class LibgpiodLines: GPIOLines {
    private let buttons: [(GPIOEdge.Button, Libgpiod.EdgeLine)]
    private var leds: [(GPIOEdge.Button, Libgpiod.OutputLine)] = []

    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    public init(config: ButtonsConfig, consumer: String = "rig") throws {
        do {
            let chip = try Libgpiod.Chip(config.chip)
            var requested: [(GPIOEdge.Button, Libgpiod.EdgeLine)] = []
            for (button, number) in [(GPIOEdge.Button.continue, config.continueLine), (.stop, config.stopLine)] {
                // A line requested before a failure is given back as `requested` goes.
                requested.append((button, try chip.edges(number, consumer: consumer, activeLow: config.activeLow, what: "the \(button) button")))
            }
            buttons = requested
            for (button, number) in [(GPIOEdge.Button.continue, config.continueLED), (.stop, config.stopLED)] {
                guard let number, let line = try? chip.output(number, consumer: consumer, activeLow: false, what: "the \(button) LED") else { continue }
                leds.append((button, line))
            }
        } catch {
            throw Unavailable(description: error.description)
        }
    }

    public func readEdges(timeoutSeconds: Double) throws -> [GPIOEdge] {
        var fds = buttons.map { pollfd(fd: $0.1.fd, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&fds, nfds_t(fds.count), Int32(timeoutSeconds * 1000))
        guard ready > 0 else { return [] }
        var edges: [GPIOEdge] = []
        for (index, fd) in fds.enumerated() where fd.revents & Int16(POLLIN) != 0 {
            guard let edge = buttons[index].1.read() else { continue }
            edges.append(GPIOEdge(button: buttons[index].0, pressed: edge.rising, timeSeconds: edge.timeSeconds))
        }
        return edges
    }

    public func setLED(_ button: GPIOEdge.Button, on: Bool) {
        for (b, line) in leds where b == button { try? line.set(on) }
    }

    public func close() {
        for (_, line) in buttons { line.release() }
        for (_, line) in leds { line.release() }
    }
}

import RigCore
import RigDFMoco
import RigFormat

/// Bytes as Dragonframe (or line noise) might send them to `rig serve dfmoco`: cut into
/// reads at the positions the first byte picks, framed, parsed, and every accepted request
/// run through the device state machine. Invariants: the framing never holds a line over
/// the limit; an accepted request names a motor that exists; no motion command leaves the
/// soft limits or asks for more than maxVelocity; every reply is one printable ASCII line.
enum DFMocoTarget {
    static let rig: Rig = {
        var pan = Axis(
            name: "pan", kind: .servo, channel: 0, calibration: nil, home: 0, park: 0,
            softMin: -85, softMax: 85, maxVelocity: 90, maxAcceleration: 180, idle: .hold)
        var tilt = pan
        tilt.name = "tilt"
        tilt.channel = 1
        tilt.softMin = -40
        tilt.softMax = 45
        tilt.maxVelocity = 60
        pan.park = nil
        var rig = Rig(name: "fuzz", axes: [pan, tilt], output: .sim)
        // Motor 1 is tilt: the section as a rig file gives it, read by its owner.
        let section = #"{"motors": ["tilt", "pan"], "stepsPerDegree": 100}"#
        guard let node = try? JSONParser.parse(section) else { fuzzFail("the dfmoco section does not parse") }
        rig.dfmoco = ConfigSection(ValueReader(node, JSONContext(file: "fuzz", path: "$.dfmoco")))
        guard (try? DFMocoConfig.parse(rig.dfmoco, axes: rig.axes))?.motorAxes == [1, 0] else { fuzzFail("the dfmoco section is not read") }
        return rig
    }()

    static func run(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let body = data.dropFirst()
        let chunk = Int(first % 61) + 1
        var buffer = DFMocoLineBuffer()
        var device = DFMocoDevice(rig: rig, version: "0.1.0")
        var observed = DFMocoDevice.Observation(positions: [0, 0], velocities: [0, 0], ticks: 0)
        var start = body.startIndex
        while start < body.endIndex {
            let end = body.index(start, offsetBy: chunk, limitedBy: body.endIndex) ?? body.endIndex
            for item in buffer.append(body[start..<end]) {
                guard case .line(let line) = item else { continue }
                if line.count > DFMocoLineBuffer.maximumLineBytes { fuzzFail("a line of \(line.count) bytes passed the framing") }
                guard case .success(let request) = DFMocoParser.parse(line, motorCount: device.motorCount) else { continue }
                let response = device.handle(request, observed)
                check(response)
                // The rig "moves" a little each request, so moving and offsets both get exercised.
                observed.ticks += 3
                observed.positions[0] = Double(Int(observed.ticks % 170) - 85)
                observed.velocities[0] = observed.ticks % 2 == 0 ? 10 : 0
            }
            start = end
        }
        check(device.disconnected())
    }

    static func check(_ response: DFMocoDevice.Response) {
        for reply in response.replies where reply.utf8.contains(where: { $0 < 0x20 || $0 > 0x7E }) {
            fuzzFail("reply \(reply.debugDescription) is not one printable line")
        }
        for command in response.commands {
            switch command {
            case .goTo(let pose):
                for (i, value) in pose.enumerated() {
                    guard let value else { continue }
                    if !(rig.axes[i].softMin...rig.axes[i].softMax).contains(value) { fuzzFail("goTo \(value) outside axis \(i)'s limits") }
                }
            case .setSpeedScale(_, let fraction):
                if !(fraction > 0 && fraction <= 1) { fuzzFail("speed scale \(fraction)") }
            case .follow(let tracks):
                if tracks.count != rig.axes.count { fuzzFail("follow with \(tracks.count) tracks") }
            case .jog, .halt:
                break
            }
        }
    }
}

import Foundation
import RigTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `rig serve dfmoco` as Dragonframe sees it, over TCP and over a pty standing in for a
/// serial port, on the simulated rig: motor 1 pan, motor 2 tilt, 100 steps per degree.
@Suite(.serialized) struct DFMocoEndToEndTests {
    func tcpServer() throws -> (DFMocoProcess, DFMocoClient) {
        let server = try DFMocoProcess(["--listen", "127.0.0.1:0"])
        let client = try DFMocoClient.connect(port: try server.port())
        return (server, client)
    }

    @Test(.blocking) func handshakeMoveMpStreamAndMsUntilStopped() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        #expect(try client.ask("hi", expecting: "hi ") == "hi 2 2 0.2.0")
        #expect(try client.ask("mm 1 2000", expecting: "mm ") == "mm 1 2000")
        // mp lines stream in while pan moves, rising to the target.
        var stream: [Int] = []
        while stream.last != 2000 {
            let line = try client.line { $0.hasPrefix("mp 1 ") }
            stream.append(Int(line.dropFirst(5)) ?? -1)
        }
        #expect(stream.count >= 3, "\(stream)")
        #expect(stream == stream.sorted(), "\(stream)")
        try client.waitUntilStopped()
        #expect(try client.position(1) == 2000)
        #expect(try client.position(2) == 0)
        // Already there: the reply is its position, and nothing moves.
        #expect(try client.ask("mm 1 2000", expecting: "m") == "mp 1 2000")
        #expect(try server.stop() == 0)
        let trace = try server.trace()
        #expect(abs((trace.frames.map { $0[0] }.max() ?? 0) - 20) < 1e-3)
    }

    @Test(.blocking) func aTargetBeyondTheSoftLimitIsClampedAndMpTellsWhere() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        #expect(try client.ask("mm 2 -9000", expecting: "mm ") == "mm 2 -9000")
        try server.logLine(containing: "outside the soft limits -40…45°; going to -40° (-4000 steps)")
        try client.waitUntilStopped()
        #expect(try client.position(2) == -4000)
        #expect(try server.stop() == 0)
        #expect((try server.trace().frames.map { $0[1] }.min() ?? 0) >= -40 - 1e-4)
    }

    @Test(.blocking) func stopAllMidMoveBrakesWithinTheAccelerationLimit() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        #expect(try client.ask("mm 1 8000", expecting: "mm ") == "mm 1 8000")
        _ = try client.line { $0.hasPrefix("mp 1 ") && (Int($0.dropFirst(5)) ?? 0) > 1000 }
        #expect(try client.ask("sa", expecting: "sa") == "sa")
        try client.waitUntilStopped()
        let stoppedAt = try client.position(1)
        #expect(stoppedAt > 1000 && stoppedAt < 8000)
        #expect(try server.stop() == 0)
        // Braking was gradual: no tick changed the velocity by more than 180°/s² allows (a
        // loaded machine's stalls and lost trace rows allowed for, as everywhere).
        let pan = Trace.AxisLimits(name: "pan", maxVelocity: 90, maxAcceleration: 180)
        let breaks = try Trace(path: server.tracePath).limitBreaks([pan], tickSeconds: 0.01, start: [0]).breaks
        #expect(breaks.isEmpty, "\(breaks.prefix(5))")
    }

    @Test(.blocking) func zeroAndNewPositionOffsetTheStepsAndMoveNothing() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        _ = try client.ask("mm 2 1500", expecting: "mm ")
        try client.waitUntilStopped()
        #expect(try client.ask("zm 2", expecting: "zm") == "zm 2")
        #expect(try client.position(2) == 0)
        #expect(try client.ask("np 2 -700", expecting: "np") == "np 2 -700")
        #expect(try client.position(2) == -700)
        #expect(try client.ask("ms", expecting: "ms ") == "ms 00")
        // Steps count from the new origin: +1000 steps is 10° further, at 25°.
        _ = try client.ask("mm 2 300", expecting: "mm ")
        try client.waitUntilStopped()
        #expect(try client.position(2) == 300)
        #expect(try server.stop() == 0)
        let tilt = try server.trace().frames.map { $0[1] }
        #expect(abs((tilt.max() ?? 0) - 25) < 1e-3)
    }

    @Test(.blocking) func goMotionExposureWindowSitsWhereTheBlurSays() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        // Pan frames at 0°, 10°, 20°; 200 ms at blur 500: the shutter opens at 5° one second
        // after go, passes 10° at 1.1 s and closes at 15° at 1.2 s (50°/s). The ramp starts at −20°.
        // bf and ms in one write: the approach to the start is reported before the loop can
        // have finished it.
        client.sendRaw(Array("bf 200 500 1 0 1000 2000\r\nms\r\n".utf8))
        #expect(try client.line { $0.hasPrefix("bf") } == "bf 1000")
        #expect(try client.line { $0.hasPrefix("ms") } == "ms 10")
        try client.waitUntilStopped()
        #expect(try client.position(1) == -2000)
        #expect(try client.ask("go", expecting: "go") == "go")
        try client.waitUntilStopped()
        #expect(try server.stop() == 0)

        let trace = try server.trace()
        let pan = trace.frames.map { $0[0] }
        // The go-motion starts after the last tick at rest on −20°.
        guard let rest = pan.lastIndex(where: { abs($0 + 20) < 1e-4 }), rest + 121 < pan.count else {
            Issue.record("no go-motion in the trace")
            return
        }
        // Ticks are 10 ms of loop time: 100 ticks after the rest is 1 s after go — unless the
        // loop stalled (a loaded machine): the timeline then paused and sped up again within
        // the limits, so ticks no longer map to the move's time. The shape still holds.
        if server.stderr.contains("the loop stalled") {
            // It goes forward to the last frame's far end (40°) and only forward (the park follows).
            let top = pan[rest...].indices.max { pan[$0] < pan[$1] } ?? rest
            #expect(abs(pan[top] - 40) < 1e-3, "the go-motion ends at \(pan[top])")
            #expect(zip(pan[rest..<top], pan[(rest + 1)...top]).allSatisfy { $1 >= $0 - 1e-9 }, "the go-motion only moves forward")
            return
        }
        #expect(abs(pan[rest + 100] - 5) < 2e-3, "opens at \(pan[rest + 100])")
        #expect(abs(pan[rest + 110] - 10) < 2e-3, "mid-exposure at \(pan[rest + 110])")
        #expect(abs(pan[rest + 120] - 15) < 2e-3, "closes at \(pan[rest + 120])")
        #expect(abs(trace.times[rest + 120] - trace.times[rest + 100] - 0.2) < 1e-6)
    }

    @Test(.blocking) func garbageIsIgnoredAndMovesNothing() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        client.send("xx 1 2")
        client.send("mm 1")
        client.send("mm 7 100")
        client.send("mm 1 ten")
        client.send("jm 1 5 99999")
        client.sendRaw([UInt8](repeating: 0x41, count: 400) + [0x0D, 0x0A])
        client.sendRaw([0xFF, 0x00, 0x6D, 0x6D, 0x0D, 0x0A])
        #expect(try client.ask("hi", expecting: "hi ") == "hi 2 2 0.2.0")
        #expect(try client.ask("ms", expecting: "ms ") == "ms 00")
        try server.logLine(containing: "ignored a line: a line of 257+ bytes")
        try server.logLine(containing: "ignored a line: mm: motor 7 does not exist; valid: 1…2")
        #expect(try server.stop() == 0)
        let frames = try server.trace().frames
        #expect(frames.allSatisfy { $0 == [0, 0] })
        // Each bad line got the reference firmware's "parse error", then hi and ms their replies.
        #expect(client.received == Array(repeating: "parse error", count: 7) + ["hi 2 2 0.2.0", "ms 00"])
    }

    /// A client flooding bad lines cannot flood the log: at most a few lines a second are
    /// logged and the rest summarised; a `go` with no `bf` before it is refused.
    @Test(.blocking) func aFloodOfBadLinesIsLoggedAtABoundedRate() throws {
        let (server, client) = try tcpServer()
        defer { client.close() }
        client.sendRaw(Array(String(repeating: "mm 1 99999999999\r\n", count: 300).utf8))
        #expect(try client.ask("go", expecting: "parse error") == "parse error")
        #expect(try client.ask("hi", expecting: "hi ") == "hi 2 2 0.2.0")
        try server.logLine(containing: "more notes (malformed lines, clamped moves) in the last second, not logged")
        #expect(try server.stop() == 0)
        let logged = server.stderr.components(separatedBy: "ignored a line").count - 1
        #expect(logged >= 1 && logged <= 100, "\(logged) of 300 bad lines logged")
        #expect(try server.trace().frames.allSatisfy { $0 == [0, 0] })
    }

    @Test(.blocking) func aSecondClientIsRefusedAndADisconnectMidMoveBrakes() throws {
        let (server, client) = try tcpServer()
        let second = try DFMocoClient.connect(port: try server.port())
        defer { second.close() }
        second.send("hi")
        #expect(throws: HarnessError.self) { _ = try second.line(within: 5) { _ in true } }
        try server.logLine(containing: "refused a second connection")
        _ = try client.ask("mm 1 8000", expecting: "mm ")
        _ = try client.line { $0.hasPrefix("mp 1 ") && (Int($0.dropFirst(5)) ?? 0) > 1000 }
        client.close()
        try server.logLine(containing: "the client left: braking to a stop")
        // A new client is welcome once the first has gone; the rig stopped short of 80°.
        let third = try DFMocoClient.connect(port: try server.port())
        defer { third.close() }
        try third.waitUntilStopped()
        #expect(try third.position(1) < 8000)
        #expect(try server.stop() == 0)
    }

    @Test(.blocking) func servesOverASerialLine() throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        guard openpty(&master, &slave, nil, nil, nil) == 0, let name = ttyname(slave) else {
            Issue.record("openpty failed: errno \(errno)")
            return
        }
        let path = String(cString: name)
        defer { _ = Glibc.close(slave) }
        let server = try DFMocoProcess(["--serial", path])
        try server.logLine(containing: "dfmoco: serving")
        let client = DFMocoClient(fd: master)
        defer { client.close() }
        #expect(try client.ask("hi", expecting: "hi ") == "hi 2 2 0.2.0")
        #expect(try client.ask("mm 2 1000", expecting: "mm ") == "mm 2 1000")
        _ = try client.line { $0.hasPrefix("mp 2 ") }
        try client.waitUntilStopped()
        #expect(try client.position(2) == 1000)
        #expect(try server.stop() == 0)
    }

    @Test(.blocking) func badEndpointsAreRefusedBeforeAnythingMoves() throws {
        let rig = try RigProcess.temporaryFile("rig.json", contents: DFMocoProcess.rigText)
        let listen = try RigProcess.run(["serve", "dfmoco", "--rig", rig, "--listen", "localhost"])
        #expect(listen.status == 2)
        #expect(listen.stderr.contains("--listen localhost: write HOST:PORT"), "\(listen.stderr)")
        let both = try RigProcess.run(["serve", "dfmoco", "--rig", rig, "--listen", "127.0.0.1:1", "--serial", "/dev/null"])
        #expect(both.status == 2)
        let missing = try RigProcess.run(["serve", "dfmoco", "--rig", rig, "--serial", "/nonexistent/tty"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("error: cannot open /nonexistent/tty"), "\(missing.stderr)")
        let notATTY = try RigProcess.run(["serve", "dfmoco", "--rig", rig, "--serial", "/dev/null"])
        #expect(notATTY.status == 1)
        #expect(notATTY.stderr.contains("/dev/null is not a serial device"), "\(notATTY.stderr)")
        // A port in use.
        let first = try DFMocoProcess(["--listen", "127.0.0.1:0"])
        let port = try first.port()
        let busy = try RigProcess.run(["serve", "dfmoco", "--rig", rig, "--listen", "127.0.0.1:\(port)"])
        #expect(busy.status == 1)
        #expect(busy.stderr.contains("another program uses the port"), "\(busy.stderr)")
        #expect(try first.stop() == 0)
    }
}

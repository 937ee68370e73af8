import CLinux
import RigCore
import RigFormat
import RigGamepad
import Testing

@Suite("jog settings in the rig file and gamepad layouts")
struct JogConfigTests {
    static func rig(jog: String) throws -> Rig {
        let text = TestRig.text.replacingOccurrences(of: "\"loopRateHz\": 100,", with: "\"loopRateHz\": 100, \"jog\": \(jog),")
        let rig = try RigParser.parse(text: text, file: "rig.json")
        _ = try JogConfig.parse(rig.jog, axes: rig.axes)
        return rig
    }

    @Test func standardLayoutPutsPanAndTiltOnTheLeftStick() throws {
        let rig = try TestRig.rig()
        #expect(rig.jog == nil)
        let config = JogConfig.standard(for: rig.axes)
        #expect(config.sticks[.leftx] == .init(axis: 0, inverted: false))
        #expect(config.sticks[.lefty] == .init(axis: 1, inverted: true))
        #expect(config.sticks[.rightx] == .init(axis: 2, inverted: false))
        #expect(config.sticks[.righty] == nil)
        #expect(config.buttons[.a] == .record && config.buttons[.b] == .delete)
        #expect(config.buttons[.x] == .home && config.buttons[.y] == .preview && config.buttons[.start] == .save)
    }

    @Test func jogKeysAreReadAndMergedOverTheStandardLayout() throws {
        let rig = try Self.rig(
            jog: """
                {"deadzone": 0.2, "expo": 0.3, "axisSnapDeg": 10, "fineSpeed": 0.05, "nudgeStep": 0.25, "watchdogMs": 300,
                 "sticks": {"rightx": {"axis": "pan", "inverted": true}, "leftx": null},
                 "buttons": {"a": "home", "x": "record"},
                 "sdlMapping": "030000005e0400008e02000010010000,Xbox 360,a:b0,b:b1,x:b2,y:b3,leftx:a0,lefty:a1,rightx:a3,righty:a4,dpup:h0.1,platform:Linux,"}
                """)
        let jog = try JogConfig.parse(rig.jog, axes: rig.axes)
        #expect(jog.deadzone == 0.2 && jog.expo == 0.3 && jog.axisSnapDegrees == 10 && jog.fineSpeed == 0.05)
        #expect(jog.nudgeStep == 0.25 && jog.watchdogMilliseconds == 300)
        #expect(jog.sticks[.rightx] == .init(axis: 0, inverted: true))
        #expect(jog.sticks[.leftx] == nil)
        #expect(jog.sticks[.lefty] == .init(axis: 1, inverted: true))
        #expect(jog.buttons[.a] == .home && jog.buttons[.x] == .record && jog.buttons[.b] == .delete)
        #expect(jog.sdlMapping?.bindings["dpup"] == .hat(0, mask: 1))
        #expect(jog.sdlMapping?.name == "Xbox 360")
    }

    @Test func mistakesAreFileErrorsWithPathAndValidChoices() throws {
        #expect(throws: FileError.self) { try Self.rig(jog: "{\"deadzon\": 0.2}") }
        do {
            _ = try Self.rig(jog: "{\"deadzon\": 0.2}")
        } catch let error as FileError {
            #expect(error.path == "$.jog.deadzon")
            #expect(error.message.contains("did you mean \"deadzone\""))
            #expect(error.description.hasPrefix("rig.json:"))
        }
        do {
            _ = try Self.rig(jog: "{\"sticks\": {\"leftx\": \"zoom\"}}")
            Issue.record("accepted an unknown axis")
        } catch let error as FileError {
            #expect(error.path == "$.jog.sticks.leftx")
            #expect(error.message.contains("\"pan\""))
        }
        do {
            _ = try Self.rig(jog: "{\"buttons\": {\"a\": \"jump\"}}")
            Issue.record("accepted an unknown action")
        } catch let error as FileError {
            #expect(error.message.contains("\"record\""))
        }
        do {
            _ = try Self.rig(jog: "{\"sdlMapping\": \"guid,name,a:q7\"}")
            Issue.record("accepted a bad mapping")
        } catch let error as FileError {
            #expect(error.path == "$.jog.sdlMapping")
        }
        #expect(throws: FileError.self) { try Self.rig(jog: "{\"fineSpeed\": 0.9, \"normalSpeed\": 0.5}") }
    }

    @Test func sdlIndicesResolveTheWaySDLNumbersLinuxDevices() throws {
        let mapping = try SDLMapping.parse("0300,Pad,a:b1,b:b0,x:b3,y:b2,start:b7,leftx:a0,lefty:a1~,rightx:a2,righty:a3,dpleft:h0.8,dpdown:h0.4,").get()
        let keys = EvdevBitmap(
            byteCount: EvdevCode.keyBitmapBytes,
            codes: [BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_TL, BTN_TR, BTN_SELECT, BTN_START].map(Int.init))
        let abs = EvdevBitmap(
            byteCount: EvdevCode.absBitmapBytes,
            codes: [ABS_X, ABS_Y, ABS_Z, ABS_RX, ABS_RY, ABS_HAT0X, ABS_HAT0Y].map(Int.init))
        let layout = GamepadLayout.sdl(mapping, keys: keys, abs: abs)
        #expect(layout.buttons[0] == .key(UInt16(BTN_EAST)))  // a: b1
        #expect(layout.buttons[1] == .key(UInt16(BTN_SOUTH)))  // b: b0
        #expect(layout.buttons[5] == .key(UInt16(BTN_START)))  // start: b7
        #expect(layout.sticks[1] == .axis(UInt16(ABS_Y), inverted: true, half: .full))
        #expect(layout.sticks[2] == .axis(UInt16(ABS_Z), inverted: false, half: .full))  // a2: hats are skipped, Z counts
        #expect(layout.dpad[2] == .hat(UInt16(ABS_HAT0X), direction: -1))
        #expect(layout.dpad[1] == .hat(UInt16(ABS_HAT0Y), direction: 1))
        #expect(layout.dpad[0] == nil)
    }

    @Test func anSDLMappedPadDrivesTheRig() throws {
        let rig = try Self.rig(jog: "{\"sdlMapping\": \"g,Odd pad,a:b1,leftx:a1,lefty:a0,\"}")
        let h = try JogHarness(rig: rig)
        try h.send { s in
            s.abs(ABS_Y, 32767)
            s.report()
        }  // a1 is leftx on this pad
        h.run(ticks: 50)
        #expect(h.velocities[0] > 0 && h.velocities[1] == 0, "\(h.velocities) \(h.input.snapshot.sticks)")
        try h.send { $0.tap(BTN_EAST) }  // b1 is "a": record
        h.run(ticks: 1)
        #expect(h.drainNotices().contains { if case .record = $0 { true } else { false } })
    }

    @Test func radialDeadzoneExpoAndSnap() {
        let shaper = StickShaper(deadzone: 0.2, expo: 0.5, snapDegrees: 10)
        #expect(shaper.shape(x: 0.14, y: 0.14) == (0, 0))
        let full = shaper.shape(x: 1, y: 0)
        #expect(abs(full.x - 1) < 1e-12 && full.y == 0)
        let half = shaper.shape(x: 0.6, y: 0)
        #expect(abs(half.x - (0.5 * 0.5 + 0.5 * 0.125)) < 1e-12)
        let nearlyX = shaper.shape(x: 0.9, y: 0.1)
        #expect(nearlyX.y == 0 && nearlyX.x > 0)
        let diagonal = shaper.shape(x: 0.7, y: -0.7)
        #expect(diagonal.x > 0 && diagonal.y < 0)
        let beyond = shaper.shape(x: 1, y: 1)
        #expect((beyond.x * beyond.x + beyond.y * beyond.y).squareRoot() <= 1 + 1e-12)
    }
}

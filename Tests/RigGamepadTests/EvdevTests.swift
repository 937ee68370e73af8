import CLinux
import RigCore
import RigGamepad
import Testing

@Suite("evdev records and packets")
struct EvdevTests {
    @Test func inputEventIsTwentyFourBytesAsTheKernelLaysItOut() {
        #expect(InputEvent.byteCount == 24)
        #expect(InputEvent.kernelByteCount == 24)
        #expect(AbsInfo.kernelByteCount == 24)
    }

    @Test func recordsDecodeAsEncoded() {
        var stream = EventStream()
        stream.abs(ABS_X, -12345)
        stream.key(BTN_SOUTH, true)
        stream.report()
        let bytes = stream.take()
        #expect(bytes.count == 3 * 24)
        let events = bytes.withUnsafeBytes { raw in (0..<3).map { InputEvent(bytes: raw, offset: $0 * 24) } }
        #expect(events[0].type == UInt16(EV_ABS) && events[0].code == UInt16(ABS_X) && events[0].value == -12345)
        #expect(events[1].type == UInt16(EV_KEY) && events[1].code == UInt16(BTN_SOUTH) && events[1].value == 1)
        #expect(events[2].type == UInt16(EV_SYN) && events[2].code == UInt16(SYN_REPORT))
        #expect(events[1].microseconds == 1000)
        var again: [UInt8] = []
        for e in events { e.encode(into: &again) }
        #expect(again == bytes)
    }

    @Test func changesBecomeVisibleTogetherAtSynReport() {
        var decoder = EvdevDecoder()
        #expect(decoder.feed(InputEvent(type: UInt16(EV_ABS), code: UInt16(ABS_X), value: 100)) == .none)
        #expect(decoder.feed(InputEvent(type: UInt16(EV_ABS), code: UInt16(ABS_Y), value: 200)) == .none)
        #expect(decoder.state.abs(UInt16(ABS_X)) == 0)
        #expect(decoder.feed(InputEvent(type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)) == .packet)
        #expect(decoder.state.abs(UInt16(ABS_X)) == 100)
        #expect(decoder.state.abs(UInt16(ABS_Y)) == 200)
    }

    @Test func synDroppedDiscardsUntilTheNextReportThenAsksForResync() {
        var decoder = EvdevDecoder()
        _ = decoder.feed(InputEvent(type: UInt16(EV_ABS), code: UInt16(ABS_X), value: 100))
        #expect(decoder.feed(InputEvent(type: UInt16(EV_SYN), code: UInt16(SYN_DROPPED), value: 0)) == .none)
        _ = decoder.feed(InputEvent(type: UInt16(EV_ABS), code: UInt16(ABS_X), value: 999))
        _ = decoder.feed(InputEvent(type: UInt16(EV_KEY), code: UInt16(BTN_SOUTH), value: 1))
        #expect(decoder.feed(InputEvent(type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)) == .resyncNeeded)
        #expect(decoder.state.abs(UInt16(ABS_X)) == 0)
        #expect(!decoder.state.isDown(UInt16(BTN_SOUTH)))
        decoder.resync { $0.setAbs(UInt16(ABS_X), 42) }
        #expect(decoder.state.abs(UInt16(ABS_X)) == 42)
        #expect(decoder.feed(InputEvent(type: UInt16(EV_ABS), code: UInt16(ABS_X), value: 43)) == .none)
        #expect(decoder.feed(InputEvent(type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0)) == .packet)
        #expect(decoder.state.abs(UInt16(ABS_X)) == 43)
    }

    @Test func axisRangesComeFromAbsInfoNotAssumed() {
        let byte = AbsInfo(minimum: 0, maximum: 255, flat: 15)
        #expect(abs(byte.normalized(255) - 1) < 1e-12)
        #expect(abs(byte.normalized(0) + 1) < 1e-12)
        #expect(abs(byte.normalized(128)) < 0.01)
        #expect(abs(byte.flatFraction - 15 / 127.5) < 1e-12)
        let wide = AbsInfo(minimum: -32768, maximum: 32767)
        #expect(abs(wide.normalized(32767) - 1) < 1e-12)
    }
}

import Foundation
import Testing

@testable import RigBLEControl

/// The coalescing scheduler on a manual clock: budget, priority, staleness, deadband,
/// packing, LCD.
@Suite struct SchedulerTests {
    static let servo = BLEControlCommand.servoValue

    func makeScheduler(channels: Int, budget: Double = 960, maxWrite: Int = 20) -> BLEControlScheduler {
        BLEControlScheduler(
            boardChannels: Array(0..<channels), commands: Array(repeating: Self.servo, count: channels),
            maxWriteBytes: maxWrite, linkBytesPerSecond: budget)
    }

    /// Runs one tick and feeds its writes to a firmware decoder; returns the writes.
    @discardableResult
    func tick(_ scheduler: inout BLEControlScheduler, at time: Double, into decoder: inout FirmwareDecoder) -> [[UInt8]] {
        scheduler.tick(nowSeconds: time, maxWrites: 16)
        var writes: [[UInt8]] = []
        for k in 0..<scheduler.writeCount {
            let start = k * scheduler.maxWriteBytes
            let write = Array(scheduler.writeBuffer[start..<(start + scheduler.writeLengths[k])])
            writes.append(write)
            decoder.receive(write)
        }
        return writes
    }

    @Test func budgetIsNeverExceededAndCommandsAreNeverSplit() {
        var scheduler = makeScheduler(channels: 8)
        var decoder = FirmwareDecoder()
        var perTick: [(time: Double, bytes: Int)] = []
        for n in 0..<1000 {  // 10 s at 100 Hz, every channel moving fast
            let t = Double(n) / 100
            for c in 0..<8 { scheduler.setTarget(c, value: Int(500 + 400 * sin(t * 3 + Double(c)))) }
            let writes = tick(&scheduler, at: t, into: &decoder)
            perTick.append((t, writes.reduce(0) { $0 + $1.count }))
            #expect(writes.allSatisfy { $0.count <= 20 && $0.count % 5 == 0 })
        }
        #expect(decoder.violations.isEmpty)
        // Any 1 s window: at most the budget plus one write.
        for start in perTick.indices {
            let window = perTick[start...].prefix { $0.time < perTick[start].time + 1 }
            #expect(window.reduce(0) { $0 + $1.bytes } <= 960 + 20)
        }
        let total = perTick.reduce(0) { $0 + $1.bytes }
        #expect(total >= 9 * 960)  // and the budget is actually used
    }

    @Test func furthestChannelGoesFirstWhenTheBudgetIsShort() {
        // 500 B/s at 100 Hz: 5 bytes (one command) per tick; the bucket holds one write (4).
        var scheduler = makeScheduler(channels: 5, budget: 500)
        var decoder = FirmwareDecoder()
        for c in 0..<5 { scheduler.setTarget(c, value: 500) }
        for n in 0..<10 { tick(&scheduler, at: Double(n) / 100, into: &decoder) }
        #expect((0..<5).allSatisfy { scheduler.boardValue($0) == 500 })
        decoder.commands = []
        let errors = [10, 300, 2, 50, 120]
        for c in 0..<5 { scheduler.setTarget(c, value: 500 + errors[c]) }
        tick(&scheduler, at: 0.10, into: &decoder)  // a full bucket: 4 of 5 fit
        #expect(decoder.commands.map(\.channel) == [1, 4, 3, 0])
        tick(&scheduler, at: 0.11, into: &decoder)  // then the last one
        #expect(decoder.commands.map(\.channel) == [1, 4, 3, 0, 2])
    }

    @Test func aStillChannelIsNotStarvedByAMovingOne() {
        var scheduler = makeScheduler(channels: 2, budget: 500)
        var decoder = FirmwareDecoder()
        scheduler.setTarget(0, value: 0)
        scheduler.setTarget(1, value: 500)
        for n in 0..<4 { tick(&scheduler, at: Double(n) / 100, into: &decoder) }
        scheduler.setTarget(1, value: 503)  // a small, constant error
        var sentChannel1At: Int?
        for n in 4..<40 {
            scheduler.setTarget(0, value: (n * 20) % 1000)  // a big error every tick
            decoder.commands = []
            tick(&scheduler, at: Double(n) / 100, into: &decoder)
            if decoder.commands.contains(where: { $0.channel == 1 }) { sentChannel1At = sentChannel1At ?? n }
        }
        #expect(sentChannel1At != nil)
        #expect((sentChannel1At ?? 99) - 4 <= 10)
    }

    @Test func sentValuesAreTheNewestTarget() {
        var scheduler = makeScheduler(channels: 1)
        var decoder = FirmwareDecoder()
        scheduler.setTarget(0, value: 100)
        scheduler.setTarget(0, value: 200)  // overwrites: nothing queues
        tick(&scheduler, at: 0, into: &decoder)
        #expect(decoder.commands.map(\.value) == [200])
        #expect(scheduler.sentValues == [200])
    }

    @Test func unchangedValuesAreNotResent() {
        var scheduler = makeScheduler(channels: 2)
        var decoder = FirmwareDecoder()
        scheduler.setTarget(0, value: 700)
        scheduler.setTarget(1, value: 300)
        tick(&scheduler, at: 0, into: &decoder)
        for n in 1..<50 {
            scheduler.setTarget(0, value: 700)
            scheduler.setTarget(1, value: 300)
            tick(&scheduler, at: Double(n) / 100, into: &decoder)
            #expect(scheduler.writeCount == 0)
            #expect(scheduler.sentValues == [-1, -1])
        }
        #expect(decoder.commands.count == 2)
    }

    @Test func wholeCommandsArePackedUpToTheWriteSize() {
        var scheduler = makeScheduler(channels: 8, budget: 100_000)
        var decoder = FirmwareDecoder()
        for c in 0..<8 { scheduler.setTarget(c, value: 100 * c) }
        tick(&scheduler, at: 0, into: &decoder)  // the bucket starts with one write
        tick(&scheduler, at: 1, into: &decoder)
        #expect(decoder.commands.count == 8)
        #expect(decoder.violations.isEmpty)
        #expect(Set(decoder.commands.compactMap(\.channel)) == Set(0..<8))
        var roomy = makeScheduler(channels: 8, budget: 100_000, maxWrite: 40)
        for c in 0..<8 { roomy.setTarget(c, value: 100 * c) }
        roomy.tick(nowSeconds: 0, maxWrites: 16)
        #expect(roomy.writeCount == 1 && roomy.writeLengths[0] == 40)
    }

    @Test func invalidatingTheBoardResendsEverything() {
        var scheduler = makeScheduler(channels: 3, budget: 100_000)
        var decoder = FirmwareDecoder()
        for c in 0..<3 { scheduler.setTarget(c, value: 250) }
        tick(&scheduler, at: 0, into: &decoder)
        tick(&scheduler, at: 0.01, into: &decoder)
        #expect(scheduler.writeCount == 0)
        scheduler.invalidateBoard()
        tick(&scheduler, at: 0.02, into: &decoder)
        #expect(decoder.commands.count == 6)
    }

    @Test func noWritesWhenTheCallerHasNoRoom() {
        var scheduler = makeScheduler(channels: 2)
        scheduler.setTarget(0, value: 1)
        scheduler.tick(nowSeconds: 0, maxWrites: 0)
        #expect(scheduler.writeCount == 0)
        #expect(scheduler.boardValue(0) == -1)  // not believed sent
    }

    @Test func twoAxesAtFiftyHertzTrackExactly() {
        var scheduler = makeScheduler(channels: 2)
        var decoder = FirmwareDecoder()
        var worst = 0
        for n in 0..<500 {
            let t = Double(n) / 50
            let a = Int((500 + 400 * sin(t)).rounded())
            let b = Int((500 + 300 * cos(t * 0.7)).rounded())
            scheduler.setTarget(0, value: a)
            scheduler.setTarget(1, value: b)
            tick(&scheduler, at: t, into: &decoder)
            worst = max(worst, abs(scheduler.boardValue(0) - a), abs(scheduler.boardValue(1) - b))
        }
        #expect(worst <= 1)
    }

    @Test func lcdTextIsSentAloneOnceAndRateLimited() {
        var scheduler = makeScheduler(channels: 1)
        var decoder = FirmwareDecoder()
        scheduler.setTarget(0, value: 10)
        scheduler.setText(BLEControlLCDLine("step 1 of 12"), BLEControlLCDLine("Café prêt"))
        var lcdTimes: [Double] = []
        for n in 0..<100 {
            let writes = tick(&scheduler, at: Double(n) / 100, into: &decoder)
            for write in writes where write.first == BLEControlCommand.lcdText {
                #expect(write.count == 19)  // alone in its write
                #expect(write[1] == 17)  // line byte + 15 text bytes + NUL
                lcdTimes.append(Double(n) / 100)
            }
        }
        #expect(decoder.violations.isEmpty)
        let texts = decoder.commands.filter { $0.command == BLEControlCommand.lcdText }
        #expect(texts.count == 2)
        #expect(texts.map { String(decoding: $0.data.dropFirst().dropLast(), as: UTF8.self) } == ["step 1 of 12   ", "Cafe pret      "])
        #expect(lcdTimes.count == 2 && lcdTimes[1] - lcdTimes[0] >= 0.3 - 1e-9)
        // The same text again sends nothing; blank lines send one LCD_CLEAR.
        scheduler.setText(BLEControlLCDLine("step 1 of 12"), BLEControlLCDLine("Café prêt"))
        for n in 100..<150 { tick(&scheduler, at: Double(n) / 100, into: &decoder) }
        #expect(decoder.commands.filter { $0.command == BLEControlCommand.lcdText }.count == 2)
        scheduler.setText(.blank, .blank)
        for n in 150..<250 { tick(&scheduler, at: Double(n) / 100, into: &decoder) }
        #expect(decoder.commands.filter { $0.command == BLEControlCommand.lcdClear }.count == 1)
    }
}

/// Decides, tick by tick, which value commands go to a BLEControl board and packs them into
/// BLE writes, within the link's byte budget. Pure: no I/O, no clock of its own (time is
/// passed in), no allocation per tick (every buffer is sized at `init`).
///
/// Each tick:
/// - every channel's latest target is taken (older targets are simply overwritten: nothing
///   queues); a channel is a candidate only if its value differs from what the board last
///   got (a deadband of one wire step: 1 µs for a servo, 20 µs of high time for a pwm channel);
/// - a token bucket refills at `linkBytesPerSecond` and holds at most one write
///   (`maxWriteBytes`), so the bytes handed to the link in any window of T seconds never
///   exceed `T × linkBytesPerSecond + maxWriteBytes`;
/// - candidates go in order of error × (1 + ticks waited): the channel furthest from its
///   target (in µs of what the board last got) first, and one that keeps losing gains
///   priority every tick, so none starves;
/// - whole 5-byte commands are packed up to `maxWriteBytes` per write, never split;
/// - a pending LCD command (``setText(_:_:)``) goes alone in its own write, at most one per
///   `lcdSpacingSeconds`, before the values of that tick.
///
/// Values are always the newest target at the tick they are sent, so a sent value is never
/// older than the tick that packs it (the output's sender drops any packet more than two
/// ticks old and asks for a ``invalidateBoard()``).
public struct BLEControlScheduler: Sendable {
    /// The board channel (0…7) of each scheduled channel.
    public let boardChannels: [UInt8]
    /// SERVO_VAL or PWM_VAL per channel.
    public let commands: [UInt8]
    public let maxWriteBytes: Int
    public let linkBytesPerSecond: Double
    /// The most writes one tick may produce (also bounded by the caller's `maxWrites`).
    public let maxWritesPerTick: Int
    /// Least time between two LCD commands (LCD_TEXT blocks the board for a few hundred ms).
    public let lcdSpacingSeconds: Double

    // Per channel.
    private var targets: [Int]  // wire value, -1: none
    private var board: [Int]  // what the board last got, -1: unknown
    private var waited: [Int]  // ticks a candidate was passed over
    // Scratch, sized at init.
    private var order: [Int]
    private var priority: [Double]

    private var tokens: Double
    private var lastTimeSeconds: Double?

    // LCD.
    private var lcdWanted = (BLEControlLCDLine.blank, BLEControlLCDLine.blank)
    private var lcdShown: (BLEControlLCDLine, BLEControlLCDLine)? = nil
    private var lcdClearWanted = false
    /// Nothing goes to the LCD until someone asks for text.
    private var lcdRequested = false
    private var lastLCDTimeSeconds = -Double.infinity

    /// This tick's writes: write `k` is `writeBuffer[k * maxWriteBytes ..< k * maxWriteBytes + writeLengths[k]]`.
    public private(set) var writeBuffer: [UInt8]
    public private(set) var writeLengths: [Int]
    /// How many writes this tick produced.
    public private(set) var writeCount = 0
    /// Per channel: the value sent this tick, or -1.
    public private(set) var sentValues: [Int]
    /// Bytes this tick produced, in all writes.
    public private(set) var bytesThisTick = 0

    /// - Parameters:
    ///   - boardChannels: each channel's index on the board (must be < 8).
    ///   - commands: ``BLEControlCommand/servoValue`` or ``BLEControlCommand/pwmValue`` per channel.
    public init(
        boardChannels: [Int], commands: [UInt8], maxWriteBytes: Int, linkBytesPerSecond: Double,
        maxWritesPerTick: Int = 8, lcdSpacingSeconds: Double = 0.3
    ) {
        self.boardChannels = boardChannels.map { UInt8(truncatingIfNeeded: $0) }
        self.commands = commands
        self.maxWriteBytes = max(maxWriteBytes, BLEControlLCDLine.commandBytes)
        self.linkBytesPerSecond = linkBytesPerSecond
        self.maxWritesPerTick = max(1, maxWritesPerTick)
        self.lcdSpacingSeconds = lcdSpacingSeconds
        let count = boardChannels.count
        targets = Array(repeating: -1, count: count)
        board = Array(repeating: -1, count: count)
        waited = Array(repeating: 0, count: count)
        order = Array(repeating: 0, count: count)
        priority = Array(repeating: 0, count: count)
        sentValues = Array(repeating: -1, count: count)
        tokens = Double(self.maxWriteBytes)
        writeBuffer = Array(repeating: 0, count: self.maxWritesPerTick * self.maxWriteBytes)
        writeLengths = Array(repeating: 0, count: self.maxWritesPerTick)
    }

    /// Tolerance for the bucket's floating-point refill (0.01 s × 500 B/s is 4.999… bytes).
    static let epsilon = 1e-6

    /// The bucket's capacity: one write.
    public var bucketBytes: Double { Double(maxWriteBytes) }

    /// Sets channel `index`'s target wire value (0…1000; clamped).
    @inline(__always)
    public mutating func setTarget(_ index: Int, value: Int) {
        targets[index] = min(max(value, 0), BLEControlCommand.maxValue)
    }

    /// Forgets channel `index`'s target: it is not sent until set again.
    public mutating func clearTarget(_ index: Int) {
        targets[index] = -1
    }

    /// The value the board last got on channel `index`, as far as the scheduler knows (-1: unknown).
    public func boardValue(_ index: Int) -> Int { board[index] }

    /// The board's state is unknown (a new connection after INIT, or writes were lost):
    /// every channel with a target is sent again (in priority order), and the LCD too.
    public mutating func invalidateBoard() {
        for index in board.indices {
            board[index] = -1
            waited[index] = 0
        }
        lcdShown = nil
    }

    /// The text the LCD should show; sent when it differs from what the board shows.
    /// Both lines blank → one LCD_CLEAR.
    public mutating func setText(_ line0: BLEControlLCDLine, _ line1: BLEControlLCDLine) {
        lcdWanted = (line0, line1)
        lcdRequested = true
        lcdClearWanted = line0 == .blank && line1 == .blank
    }

    /// Runs one tick at `nowSeconds` (any monotonic scale), producing at most `maxWrites`
    /// writes. Read the result from ``writeCount``, ``writeLengths``, ``writeBuffer``,
    /// ``sentValues``.
    public mutating func tick(nowSeconds: Double, maxWrites: Int) {
        let elapsed = lastTimeSeconds.map { max(0, nowSeconds - $0) } ?? 0
        lastTimeSeconds = nowSeconds
        tokens = min(bucketBytes, tokens + elapsed * linkBytesPerSecond)
        writeCount = 0
        bytesThisTick = 0
        for index in sentValues.indices { sentValues[index] = -1 }
        let writeLimit = min(maxWrites, maxWritesPerTick)
        guard writeLimit > 0 else { return }

        packLCD(nowSeconds: nowSeconds)
        guard writeCount < writeLimit else { return }
        packValues(writeLimit: writeLimit)
    }

    /// One pending LCD command, alone in its write, if the spacing and the bucket allow.
    private mutating func packLCD(nowSeconds: Double) {
        guard lcdRequested, nowSeconds - lastLCDTimeSeconds >= lcdSpacingSeconds else { return }
        let shown = lcdShown
        if lcdClearWanted {
            if let shown, shown.0 == .blank, shown.1 == .blank { return }
            guard tokens + Self.epsilon >= 2 else { return }
            writeBuffer[0] = BLEControlCommand.lcdClear
            writeBuffer[1] = 0
            finishLCDWrite(bytes: 2, nowSeconds: nowSeconds)
            lcdShown = (.blank, .blank)
            return
        }
        let line: Int
        if shown?.0 != lcdWanted.0 {
            line = 0
        } else if shown?.1 != lcdWanted.1 {
            line = 1
        } else {
            return
        }
        guard tokens + Self.epsilon >= Double(BLEControlLCDLine.commandBytes) else { return }
        (line == 0 ? lcdWanted.0 : lcdWanted.1).storeCommand(line: line, into: &writeBuffer, at: 0)
        finishLCDWrite(bytes: BLEControlLCDLine.commandBytes, nowSeconds: nowSeconds)
        // A line the board never showed is unknown: keep the other one unknown until sent.
        var updated = shown ?? (line == 0 ? (lcdWanted.0, BLEControlLCDLine(ascii: [0])) : (BLEControlLCDLine(ascii: [0]), lcdWanted.1))
        if line == 0 { updated.0 = lcdWanted.0 } else { updated.1 = lcdWanted.1 }
        lcdShown = updated
    }

    private mutating func finishLCDWrite(bytes: Int, nowSeconds: Double) {
        writeLengths[0] = bytes
        writeCount = 1
        bytesThisTick = bytes
        tokens -= Double(bytes)
        lastLCDTimeSeconds = nowSeconds
    }

    /// Orders the candidates and packs as many as the bucket allows.
    private mutating func packValues(writeLimit: Int) {
        var candidates = 0
        for index in targets.indices {
            let target = targets[index]
            guard target >= 0, target != board[index] else {
                waited[index] = 0
                continue
            }
            let unit = commands[index] == BLEControlCommand.pwmValue ? 20.0 : 1.0
            let error = board[index] < 0 ? 4000 : Double(abs(target - board[index])) * unit
            priority[index] = error * Double(1 + waited[index])
            // Insertion sort: ≤ 8 channels; ties keep channel order.
            var position = candidates
            while position > 0, priority[order[position - 1]] < priority[index] {
                order[position] = order[position - 1]
                position -= 1
            }
            order[position] = index
            candidates += 1
        }
        guard candidates > 0 else { return }

        let size = BLEControlCommand.valueCommandBytes
        var sentCount = 0
        var writeStart = writeCount * maxWriteBytes
        var writeLength = 0
        for rank in 0..<candidates {
            guard tokens + Self.epsilon >= Double(size) else { break }
            if writeLength + size > maxWriteBytes {
                writeLengths[writeCount] = writeLength
                writeCount += 1
                guard writeCount < writeLimit else { break }
                writeStart = writeCount * maxWriteBytes
                writeLength = 0
            }
            let index = order[rank]
            BLEControlCommand.storeValue(
                command: commands[index], channel: boardChannels[index], value: targets[index],
                into: &writeBuffer, at: writeStart + writeLength)
            writeLength += size
            tokens -= Double(size)
            bytesThisTick += size
            board[index] = targets[index]
            sentValues[index] = targets[index]
            waited[index] = 0
            sentCount += 1
        }
        if writeLength > 0, writeCount < writeLimit {
            writeLengths[writeCount] = writeLength
            writeCount += 1
        }
        // Candidates left out wait one more tick (and gain priority).
        if sentCount < candidates {
            for rank in sentCount..<candidates { waited[order[rank]] += 1 }
        }
    }
}

import RigCore
import RigFormat

/// A deterministic comparison of the coalescing scheduler with the stock BLEControl
/// library's strategy, on a simulated link (no radio, no board): the motion is played tick
/// by tick, commands reach the board at the UART's pace (`linkBytesPerSecond`).
///
/// - **coalesced**: ``BLEControlScheduler`` each tick, as ``BLEControlOutput`` runs it.
/// - **stock**: whenever any servo changes, every servo is re-sent, each command its own
///   write, through an unbounded queue drained at one send per 20 ms.
///
/// Tracking error is |target − what the board has| in µs, sampled at every tick once that
/// tick's writes were delivered; latency is delivery time − the tick the value was taken.
/// Value age is how stale the board is, per channel and tick: 0 while it shows the current
/// target, else the time since the loop took the value it shows.
public enum BLEControlComparison {
    /// The figures of one strategy.
    public struct Figures: Sendable, Equatable {
        /// Every byte the strategy sends for the program (the stock queue drained to the end).
        public var totalBytes: Int
        public var bytesPerSecond: Double
        public var writesPerSecond: Double
        /// Most bytes delivered in any 1 s window.
        public var maxBytesInOneSecond: Int
        public var meanTrackingErrorMicroseconds: Double
        public var maxTrackingErrorMicroseconds: Double
        public var meanLatencySeconds: Double
        public var maxLatencySeconds: Double
        /// Seconds after the program's end until the last command reached the board.
        public var drainSeconds: Double
        public var rmsTrackingErrorMicroseconds: Double = 0
        /// Value age at the board (see the type's comment), over every channel and tick.
        public var valueAgeP50Seconds: Double = 0
        public var valueAgeP99Seconds: Double = 0
        /// p99 of the value age over the first and the last quarter of the run: a growing
        /// age (a queue falling behind) shows as a later quarter far above the first.
        public var valueAgeP99FirstQuarterSeconds: Double = 0
        public var valueAgeP99LastQuarterSeconds: Double = 0
    }

    public struct Report: Sendable, Equatable {
        public var durationSeconds: Double
        public var tickHz: Double
        public var linkBytesPerSecond: Double
        public var coalesced: Figures
        public var stock: Figures
        /// The channels the program drives.
        public var channels = 0

        /// How long the link takes to carry one value command for every channel. While every
        /// channel changes every tick, the board shows some channel's value for at least this
        /// long before its next one arrives, whatever the sender does: no strategy's value age
        /// p99 can be much below it (41.7 ms for 8 servos at 960 B/s, 4.2 ticks at 100 Hz).
        public var fullRefreshSeconds: Double {
            Double(channels * BLEControlCommand.valueCommandBytes) / max(linkBytesPerSecond, 1e-9)
        }

        /// Stock total bytes / coalesced total bytes for the same program.
        public var byteRatio: Double { Double(stock.totalBytes) / Double(max(coalesced.totalBytes, 1)) }

        public var summary: String {
            func line(_ name: String, _ f: Figures) -> String {
                "\(name): \(f.totalBytes) B in all, \(fixed(f.bytesPerSecond, 0)) B/s (max \(f.maxBytesInOneSecond) B in 1 s), \(fixed(f.writesPerSecond, 0)) writes/s, "
                    + "tracking error mean \(fixed(f.meanTrackingErrorMicroseconds, 2)) µs max \(fixed(f.maxTrackingErrorMicroseconds, 1)) µs, "
                    + "latency mean \(fixed(f.meanLatencySeconds * 1000, 1)) ms max \(fixed(f.maxLatencySeconds * 1000, 1)) ms, drain \(fixed(f.drainSeconds, 2)) s\n"
                    + "           tracking error RMS \(fixed(f.rmsTrackingErrorMicroseconds, 2)) µs, value age at the board p50 \(fixed(f.valueAgeP50Seconds * 1000, 1)) ms "
                    + "p99 \(fixed(f.valueAgeP99Seconds * 1000, 1)) ms (\(fixed(f.valueAgeP99Seconds * tickHz, 1)) ticks; "
                    + "first quarter \(fixed(f.valueAgeP99FirstQuarterSeconds * 1000, 1)) ms, last quarter \(fixed(f.valueAgeP99LastQuarterSeconds * 1000, 1)) ms)"
            }
            return "\(fixed(durationSeconds, 1)) s at \(fixed(tickHz, 0)) Hz, budget \(fixed(linkBytesPerSecond, 0)) B/s\n"
                + line("coalesced", coalesced) + "\n" + line("stock    ", stock) + "\n"
                + "stock sends \(fixed(byteRatio, 1))× the bytes\n"
                + "one value for each of the \(channels) channels takes \(fixed(fullRefreshSeconds * 1000, 1)) ms of the link "
                + "(\(fixed(fullRefreshSeconds * tickHz, 1)) ticks): while every channel changes every tick, no sender keeps every channel's value younger than that"
        }
    }

    /// Plays `motion` on `rig` (servo axes; pwm axes count as servos of their duty) through
    /// both strategies.
    public static func run(
        rig: Rig, motion: Motion, startPose: [Double], linkBytesPerSecond: Double = 960,
        maxWriteBytes: Int = 20
    ) -> Report {
        // The targets, tick by tick, as SERVO_VAL wire values.
        var player = Player(rig: rig, motion: motion, startPose: startPose)
        var positions = startPose
        var targets: [[Int]] = []
        while !player.isFinished, targets.count < 1_000_000 {
            // Stepped programs advance as soon as each step is ready (trigger auto).
            if case .ready = player.tick(into: &positions) { player.advance() }
            targets.append(
                rig.axes.indices.map { index in
                    switch rig.axes[index].command(forPosition: positions[index]) {
                    case .pulse(let us): BLEControlCommand.servoValue(pulseMicroseconds: us).value
                    case .duty(let percent): BLEControlCommand.pwmValue(dutyPercent: percent)
                    case .off: 0
                    }
                })
        }
        let dt = rig.tickSeconds
        let duration = Double(targets.count) * dt
        let channels = rig.axes.count
        let size = Double(BLEControlCommand.valueCommandBytes)

        // Coalesced.
        var scheduler = BLEControlScheduler(
            boardChannels: Array(0..<channels),
            commands: Array(repeating: BLEControlCommand.servoValue, count: channels),
            maxWriteBytes: maxWriteBytes, linkBytesPerSecond: linkBytesPerSecond)
        var link = Link(rate: linkBytesPerSecond, channels: channels)
        for (tick, frame) in targets.enumerated() {
            let now = Double(tick) * dt
            for channel in 0..<channels { scheduler.setTarget(channel, value: frame[channel]) }
            scheduler.tick(nowSeconds: now, maxWrites: 8)
            for write in 0..<scheduler.writeCount {
                let start = write * scheduler.maxWriteBytes
                let length = scheduler.writeLengths[write]
                var commands: [(Int, Int)] = []
                var offset = start
                while offset < start + length {
                    commands.append(
                        (
                            Int(scheduler.writeBuffer[offset + 2]),
                            Int(scheduler.writeBuffer[offset + 3]) << 8 | Int(scheduler.writeBuffer[offset + 4])
                        ))
                    offset += BLEControlCommand.valueCommandBytes
                }
                link.deliver(commands, bytes: length, handedAt: now, takenAt: now)
            }
            link.sample(frame, at: now)
        }
        let coalesced = link.figures(duration: duration)

        // Stock: every servo on every change, one command per write, one send per 20 ms.
        var stock = Link(rate: linkBytesPerSecond, channels: channels)
        var queue: [(channel: Int, value: Int, takenAt: Double)] = []
        var head = 0
        var nextSend = 0.0
        var previous: [Int]?
        let sendInterval = 0.020
        for (tick, frame) in targets.enumerated() {
            let now = Double(tick) * dt
            if frame != previous {
                for channel in 0..<channels { queue.append((channel, frame[channel], now)) }
                previous = frame
            }
            while head < queue.count, nextSend <= now + dt - 1e-12 {
                let send = max(nextSend, queue[head].takenAt)
                guard send < now + dt else { break }
                let item = queue[head]
                stock.deliver([(item.channel, item.value)], bytes: Int(size), handedAt: send, takenAt: item.takenAt)
                head += 1
                nextSend = send + sendInterval
            }
            stock.sample(frame, at: now)
        }
        while head < queue.count {
            let item = queue[head]
            let send = max(nextSend, item.takenAt)
            stock.deliver([(item.channel, item.value)], bytes: Int(size), handedAt: send, takenAt: item.takenAt)
            head += 1
            nextSend = send + sendInterval
        }
        let stockFigures = stock.figures(duration: duration)
        return Report(
            durationSeconds: duration, tickHz: rig.loopRateHz, linkBytesPerSecond: linkBytesPerSecond,
            coalesced: coalesced, stock: stockFigures, channels: channels)
    }

    /// The simulated UART and board.
    struct Link {
        let rate: Double
        var uartFree = 0.0
        var board: [Int]
        /// Delivery time and new value per command, in delivery order.
        var pending: [(time: Double, channel: Int, value: Int, takenAt: Double)] = []
        /// When the loop took the value each channel shows.
        var boardTakenAt: [Double]
        /// (tick time, age) per channel and tick.
        var ages: [(time: Double, age: Double)] = []
        var deliveries: [(time: Double, bytes: Int)] = []
        var writes = 0
        var bytes = 0
        var latencies: [Double] = []
        var errors: [Double] = []

        init(rate: Double, channels: Int) {
            self.rate = rate
            board = Array(repeating: -1, count: channels)
            boardTakenAt = Array(repeating: 0, count: channels)
        }

        mutating func deliver(_ commands: [(Int, Int)], bytes: Int, handedAt: Double, takenAt: Double) {
            let done = max(uartFree, handedAt) + Double(bytes) / rate
            uartFree = done
            writes += 1
            self.bytes += bytes
            deliveries.append((done, bytes))
            for (channel, value) in commands {
                pending.append((done, channel, value, takenAt))
                latencies.append(done - takenAt)
            }
        }

        /// The board's error once this tick's writes (handed at `now`) arrived.
        mutating func sample(_ targets: [Int], at now: Double) {
            // Commands handed up to now count once delivered; the coalesced sender's
            // writes of this tick are delivered within the tick at this budget.
            let horizon = now + 1e-9 + Double(BLEControlCommand.valueCommandBytes * 4) / rate
            var kept: [(time: Double, channel: Int, value: Int, takenAt: Double)] = []
            for item in pending {
                if item.time <= horizon {
                    board[item.channel] = item.value
                    boardTakenAt[item.channel] = item.takenAt
                } else {
                    kept.append(item)
                }
            }
            pending = kept
            for channel in targets.indices where board[channel] >= 0 {
                errors.append(Double(abs(targets[channel] - board[channel])))
                ages.append((now, board[channel] == targets[channel] ? 0 : now - boardTakenAt[channel]))
            }
        }

        func figures(duration: Double) -> Figures {
            let end = max(duration, deliveries.last?.time ?? 0)
            var best = 0
            var sum = 0
            var start = 0
            for index in deliveries.indices {
                sum += deliveries[index].bytes
                while deliveries[index].time - deliveries[start].time >= 1 {
                    sum -= deliveries[start].bytes
                    start += 1
                }
                best = max(best, sum)
            }
            return Figures(
                totalBytes: bytes, bytesPerSecond: Double(bytes) / end, writesPerSecond: Double(writes) / end, maxBytesInOneSecond: best,
                meanTrackingErrorMicroseconds: errors.isEmpty ? 0 : errors.reduce(0, +) / Double(errors.count),
                maxTrackingErrorMicroseconds: errors.max() ?? 0,
                meanLatencySeconds: latencies.isEmpty ? 0 : latencies.reduce(0, +) / Double(latencies.count),
                maxLatencySeconds: latencies.max() ?? 0,
                drainSeconds: max(0, (deliveries.last?.time ?? 0) - duration),
                rmsTrackingErrorMicroseconds: errors.isEmpty ? 0 : (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot(),
                valueAgeP50Seconds: Self.percentile(ages.map(\.age), 0.5),
                valueAgeP99Seconds: Self.percentile(ages.map(\.age), 0.99),
                valueAgeP99FirstQuarterSeconds: Self.percentile(ages.filter { $0.time < duration / 4 }.map(\.age), 0.99),
                valueAgeP99LastQuarterSeconds: Self.percentile(ages.filter { $0.time >= duration * 3 / 4 }.map(\.age), 0.99))
        }

        /// The smallest value with at least `fraction` of `values` at or below it.
        static func percentile(_ values: [Double], _ fraction: Double) -> Double {
            guard !values.isEmpty else { return 0 }
            let sorted = values.sorted()
            let rank = max(1, Int((fraction * Double(sorted.count)).rounded(.up)))
            return sorted[min(rank, sorted.count) - 1]
        }
    }
}

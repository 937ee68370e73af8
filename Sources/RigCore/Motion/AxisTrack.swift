/// One key on an axis's timeline.
public struct Keyframe: Sendable, Equatable {
    /// Seconds (keyframe programs) or frame number (timelapses).
    public var time: Double
    public var value: Double
    /// How the segment that starts at this key moves to the next key.
    public var interpolation: Interpolation

    public init(time: Double, value: Double, interpolation: Interpolation = .smooth) {
        self.time = time
        self.value = value
        self.interpolation = interpolation
    }
}

/// An axis's keyframed path, evaluated without allocating.
public struct AxisTrack: Sendable, Equatable {
    public let keys: [Keyframe]
    /// Slope at each key (value per time unit) for smooth segments.
    public let tangents: [Double]

    /// - Precondition: keys sorted by strictly increasing time, at least one key.
    public init(keys: [Keyframe]) {
        self.keys = keys
        self.tangents = Self.monotoneTangents(keys)
    }

    /// A path with the slope at each key given (value per time unit) instead of derived,
    /// for a caller that needs a velocity at a key (a go-motion ramp).
    /// Keys as for `init(keys:)`; with the wrong number of tangents the derived ones are used.
    public init(keys: [Keyframe], tangents: [Double]) {
        self.keys = keys
        self.tangents = tangents.count == keys.count ? tangents : Self.monotoneTangents(keys)
    }

    public var startTime: Double { keys[0].time }
    public var endTime: Double { keys[keys.count - 1].time }

    /// Fritsch–Carlson tangents: zero at the first and last key (the rig starts and ends
    /// at rest) and at local extrema, limited so no segment overshoots its keys.
    static func monotoneTangents(_ keys: [Keyframe]) -> [Double] {
        let n = keys.count
        guard n > 1 else { return [0] }
        var secants = [Double](repeating: 0, count: n - 1)
        for i in 0..<(n - 1) {
            secants[i] = (keys[i + 1].value - keys[i].value) / (keys[i + 1].time - keys[i].time)
        }
        var m = [Double](repeating: 0, count: n)
        for i in 1..<(n - 1) {
            let a = secants[i - 1]
            let b = secants[i]
            if a * b <= 0 {
                m[i] = 0
                continue
            }
            // Weighted harmonic mean (Fritsch–Butland): stays within 3× either secant, so
            // the segment is monotone.
            let h0 = keys[i].time - keys[i - 1].time
            let h1 = keys[i + 1].time - keys[i].time
            let w1 = 2 * h1 + h0
            let w2 = h1 + 2 * h0
            m[i] = (w1 + w2) / (w1 / a + w2 / b)
        }
        return m
    }

    /// Position at `time`, holding the first key before the start and the last after the
    /// end. `cursor` remembers the segment between calls so sequential sampling is O(1).
    @inline(__always)
    public func value(at time: Double, cursor: inout Int) -> Double {
        let n = keys.count
        if time <= keys[0].time {
            cursor = 0
            return keys[0].value
        }
        if time >= keys[n - 1].time {
            cursor = n - 1
            return keys[n - 1].value
        }
        var i = min(max(cursor, 0), n - 2)
        while i > 0, time < keys[i].time { i -= 1 }
        while i < n - 2, time >= keys[i + 1].time { i += 1 }
        cursor = i
        let k0 = keys[i]
        let k1 = keys[i + 1]
        let h = k1.time - k0.time
        let u = (time - k0.time) / h
        switch k0.interpolation {
        case .smooth:
            // Cubic Hermite with the shared tangents.
            let u2 = u * u
            let u3 = u2 * u
            let h00 = 2 * u3 - 3 * u2 + 1
            let h10 = u3 - 2 * u2 + u
            let h01 = -2 * u3 + 3 * u2
            let h11 = u3 - u2
            return h00 * k0.value + h10 * h * tangents[i] + h01 * k1.value + h11 * h * tangents[i + 1]
        case .hold:
            return k0.value
        default:
            return k0.value + (k1.value - k0.value) * k0.interpolation.progress(u)
        }
    }

    public func value(at time: Double) -> Double {
        var cursor = 0
        return value(at: time, cursor: &cursor)
    }
}

import RigCore
import RigPCA9685
import SystemPackage

/// A register-level MPU-6050 on the fake bus (attached to a `PCA9685Model`), written from
/// the register map (RM-MPU-6000A-00 rev. 4.2) independently of the driver: power-on
/// values (PWR_MGMT_1 0x40, asleep; WHO_AM_I 0x68), register auto-increment on reads, and
/// gyro registers that replay a list of rates (°/s, per axis): each block read that
/// starts at GYRO_XOUT_H takes the next sample, scaled by GYRO_CONFIG's FS_SEL as the
/// chip would, saturated to int16, big-endian. Asleep, the gyro reads 0.
final class MPU6050Model: I2CBus {
    static let WHO_AM_I: UInt8 = 0x75, PWR_MGMT_1: UInt8 = 0x6B, GYRO_CONFIG: UInt8 = 0x1B, GYRO_XOUT_H: UInt8 = 0x43
    static let SLEEP: UInt8 = 0x40

    let path = "/dev/i2c-fake"
    let address: Int
    let log: EventLog
    private(set) var registers = [UInt8](repeating: 0, count: 128)
    /// The rates the gyro replays, in order (the last is held).
    var replay: [SIMD3<Double>] = []
    private(set) var samplesRead = 0

    init(address: Int = 0x68, whoAmI: UInt8 = 0x68, log: EventLog) {
        self.address = address
        self.log = log
        registers[Int(Self.PWR_MGMT_1)] = Self.SLEEP
        registers[Int(Self.WHO_AM_I)] = whoAmI
    }

    var isAsleep: Bool { registers[Int(Self.PWR_MGMT_1)] & Self.SLEEP != 0 }

    /// LSB per °/s for FS_SEL (register map 4.19).
    var sensitivity: Double { [131, 65.5, 32.8, 16.4][Int(registers[Int(Self.GYRO_CONFIG)] >> 3 & 0x03)] }

    /// The next `times` transactions fail with EIO (a flaky bus; no effect on the chip).
    func failNext(_ times: Int) { failuresLeft = times }
    private var failuresLeft = 0

    private func begin(_ kind: Transaction.Kind, address: Int, register: UInt8, data: [UInt8], busBytes: Int, read: Bool) throws(I2CError) {
        if failuresLeft > 0 {
            failuresLeft -= 1
            log.append(.transaction(Transaction(kind: kind, address: address, register: register, data: data, busBytes: busBytes, failedWith: 5)))
            throw I2CError(errno: Errno(rawValue: 5), operation: read ? .read(register: register) : .write(register: register), bus: path, address: address)
        }
        guard address == self.address else {
            log.append(.transaction(Transaction(kind: kind, address: address, register: register, data: data, busBytes: busBytes, failedWith: 121)))
            throw I2CError(errno: Errno(rawValue: 121), operation: read ? .read(register: register) : .write(register: register), bus: path, address: address)
        }
        log.append(.transaction(Transaction(kind: kind, address: address, register: register, data: data, busBytes: busBytes)))
    }

    /// Instead of a replay: the camera on a servo horn whose angle this returns (read from
    /// the PCA9685 model's channel), as the simulated payload's spring, stepped once per
    /// gyro read; its rate about z, with noise.
    var follow: (horn: () -> Double, response: PayloadResponse, noiseDps: Double)?
    /// The chip's own zero-rate offset, °/s per axis, added to every reading (a real
    /// MPU-6050's is up to ±20 °/s).
    var offset = SIMD3<Double>(repeating: 0)
    private var noiseState: UInt64 = 7

    private func followed() -> SIMD3<Double>? {
        guard var f = follow else { return nil }
        f.response.step(horn: f.horn())
        follow = f
        var v = SIMD3<Double>(repeating: 0)
        for c in 0..<3 {
            var sum = 0.0
            for _ in 0..<3 {
                noiseState = noiseState &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                sum += Double(noiseState >> 11) / Double(1 << 53)
            }
            v[c] = (sum - 1.5) * 2 * f.noiseDps
        }
        v.z += f.response.rate
        return v
    }

    private func loadGyro() {
        let rate = offset + (followed() ?? (replay.isEmpty ? SIMD3(repeating: 0) : replay[min(samplesRead, replay.count - 1)]))
        samplesRead += 1
        for axis in 0..<3 {
            let counts = isAsleep ? 0 : Int16(clamping: Int((rate[axis] * sensitivity).rounded()))
            let bits = UInt16(bitPattern: counts)
            registers[Int(Self.GYRO_XOUT_H) + 2 * axis] = UInt8(bits >> 8)
            registers[Int(Self.GYRO_XOUT_H) + 2 * axis + 1] = UInt8(bits & 0xFF)
        }
    }

    func writeByte(address: Int, register: UInt8, value: UInt8) throws(I2CError) {
        try begin(.writeByte, address: address, register: register, data: [value], busBytes: 3, read: false)
        registers[Int(register & 0x7F)] = value
    }

    func writeBlock(address: Int, register: UInt8, data: UnsafeRawBufferPointer) throws(I2CError) {
        try begin(.writeBlock, address: address, register: register, data: Array(data), busBytes: 2 + data.count, read: false)
        for (i, byte) in data.enumerated() { registers[(Int(register) + i) & 0x7F] = byte }
    }

    func readByte(address: Int, register: UInt8) throws(I2CError) -> UInt8 {
        try begin(.readByte, address: address, register: register, data: [], busBytes: 4, read: true)
        if register == Self.GYRO_XOUT_H { loadGyro() }
        return registers[Int(register & 0x7F)]
    }

    func readBlock(address: Int, register: UInt8, into: UnsafeMutableRawBufferPointer) throws(I2CError) {
        try begin(.readBlock, address: address, register: register, data: [], busBytes: 3 + into.count, read: true)
        if register == Self.GYRO_XOUT_H { loadGyro() }
        for i in 0..<into.count { into[i] = registers[(Int(register) + i) & 0x7F] }
    }

    func quickWrite(address: Int) throws(I2CError) {
        try begin(.quickWrite, address: address, register: 0, data: [], busBytes: 1, read: false)
    }

    func receiveByte(address: Int) throws(I2CError) -> UInt8 {
        try begin(.receiveByte, address: address, register: 0, data: [], busBytes: 2, read: true)
        return 0
    }

    /// A ring-down as the simulated payload makes it (`PayloadResponse`, the spring
    /// `SimOutput` uses): the horn steps by `stepDegrees` at t = 0 and holds; the camera's
    /// rate about `axis`, sampled every `tickSeconds`, with Gaussian-ish noise of
    /// `noiseDps` (deterministic).
    static func ringDown(
        payload: Payload, stepDegrees: Double = 5, tickSeconds: Double = 0.01, seconds: Double = 4, axis: Int = 2, noiseDps: Double = 0.5,
        seed: UInt64 = 1
    ) -> [SIMD3<Double>] {
        var response = PayloadResponse(payload: payload, tickSeconds: tickSeconds, angle: 0)
        var state = seed
        func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var out: [SIMD3<Double>] = []
        for _ in 0..<Int(seconds / tickSeconds) {
            response.step(horn: stepDegrees)
            var v = SIMD3<Double>(repeating: 0)
            for c in 0..<3 { v[c] = (uniform() + uniform() + uniform() - 1.5) * 2 * noiseDps }
            v[axis] += response.rate
            out.append(v)
        }
        return out
    }
}

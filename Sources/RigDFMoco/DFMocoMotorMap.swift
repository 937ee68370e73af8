import RigCore

/// DFMoco motors ↔ rig axes, and integer steps ↔ degrees. Each motor has a step offset
/// (`zm`, `np`): Dragonframe's step count is `round(position · stepsPerDegree) + offset`.
public struct DFMocoMotorMap: Sendable, Equatable {
    /// Rig axis index per motor (`axisIndices[0]` is motor 1).
    public let axisIndices: [Int]
    public let stepsPerDegree: Double
    /// The motors' axes, in motor order.
    public let axes: [Axis]
    /// Per motor, in steps.
    public private(set) var offsets: [Int]

    public init(rig: Rig) {
        // The section was read when the rig was loaded (`Devices.check`).
        let config = (try? DFMocoConfig.parse(rig.dfmoco, axes: rig.axes)) ?? DFMocoConfig.standard(for: rig.axes)
        axisIndices = config.motorAxes.filter { rig.axes.indices.contains($0) }
        stepsPerDegree = config.stepsPerDegree
        axes = axisIndices.map { rig.axes[$0] }
        offsets = [Int](repeating: 0, count: axisIndices.count)
    }

    public var motorCount: Int { axisIndices.count }

    /// Dragonframe's step count for `motor` (0-based) at `position` (degrees or %).
    public func steps(motor: Int, position: Double) -> Int {
        Self.roundedSteps(position * stepsPerDegree) + offsets[motor]
    }

    /// Where `steps` is on `motor`'s axis (degrees or %), before any clamping.
    public func position(motor: Int, steps: Int) -> Double {
        Double(steps - offsets[motor]) / stepsPerDegree
    }

    /// Makes the motor's position at `position` read as `steps` (`zm` is `steps` 0).
    public mutating func setOffset(motor: Int, position: Double, steps: Int) {
        offsets[motor] = steps - Self.roundedSteps(position * stepsPerDegree)
    }

    /// A step count from a product that input could make huge or NaN: rounded, and kept
    /// far inside `Int` so that no conversion or later sum can trap.
    static func roundedSteps(_ value: Double) -> Int {
        guard value.isFinite else { return 0 }
        return Int(min(max(value.rounded(), -1e15), 1e15))
    }
}

import RigCore
import RigFormat

/// How `rig serve dfmoco` shows the rig to Dragonframe (`"dfmoco"` in a rig file): which
/// axes are DFMoco motors 1, 2, … and how many integer steps make one degree (or one % of
/// duty cycle on a pwm axis). Dragonframe counts steps and converts them to its own units.
public struct DFMocoConfig: Sendable, Equatable {
    /// Axis indices in motor order: `motorAxes[0]` is motor 1.
    public var motorAxes: [Int]
    /// Steps per degree (servo axes) or per % (pwm axes).
    public var stepsPerDegree: Double

    public static let defaultStepsPerDegree = 100.0
    /// Small enough that a step stays a visible fraction of a degree, large enough that a
    /// servo's ±180° stays far inside DFMoco's 32-bit step counts.
    public static let stepsPerDegreeRange: ClosedRange<Double> = 1...100_000

    public init(motorAxes: [Int], stepsPerDegree: Double = DFMocoConfig.defaultStepsPerDegree) {
        self.motorAxes = motorAxes
        self.stepsPerDegree = stepsPerDegree
    }

    /// Every axis in file order, at the default step size.
    public static func standard(for axes: [Axis]) -> DFMocoConfig {
        DFMocoConfig(motorAxes: Array(axes.indices))
    }

    /// Reads the rig's `"dfmoco"` section: `{"motors": ["pan", "tilt"], "stepsPerDegree":
    /// 100}`, both optional; every axis at the default step size when the rig has none.
    public static func parse(_ section: ConfigSection?, axes: [Axis]) throws(FileError) -> DFMocoConfig {
        guard let section else { return standard(for: axes) }
        let object = try section.reader.object()
        var config = standard(for: axes)
        if let motors = object.optional("motors") {
            var order: [Int] = []
            for entry in try motors.nonEmptyArray() {
                let name = try entry.nonEmptyString()
                guard let axis = axes.firstIndex(where: { $0.name == name }) else {
                    throw entry.error("the rig has no axis \"\(elided(name))\"; its axes: \(quotedList(axes.map(\.name)))")
                }
                guard !order.contains(axis) else {
                    throw entry.error("axis \"\(name)\" is listed twice; each axis can be one motor")
                }
                order.append(axis)
            }
            config.motorAxes = order
        }
        if let steps = object.optional("stepsPerDegree") {
            config.stepsPerDegree = try steps.number(in: stepsPerDegreeRange, unit: "steps/°")
        }
        try object.finish()
        return config
    }
}

import RigRuntime

/// The board's 2×16 LCD shows step sync's "step k of N" and Cascable's message.
extension BLEControlOutput: TextDisplay {}

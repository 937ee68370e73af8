import RigCore

enum TestRig {
    static let text = """
        {
          "name": "test",
          "loopRateHz": 100,
          "axes": [
            {"name": "pan", "channel": 0, "softLimits": [-90, 90], "maxVelocity": 60, "maxAcceleration": 120},
            {"name": "tilt", "channel": 1, "softLimits": [-30, 45], "maxVelocity": 40, "maxAcceleration": 80},
            {"name": "slide", "channel": 2, "softLimits": [-80, 80], "maxVelocity": 30, "maxAcceleration": 60}
          ]
        }
        """

    static func rig() throws -> Rig {
        try RigParser.parse(text: text, file: "test.json")
    }
}

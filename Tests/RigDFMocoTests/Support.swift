import RigCore

/// A pan/tilt rig with a dfmoco key: motor 1 is tilt, motor 2 is pan, 100 steps per degree.
let testRigText = """
    {"name": "bench", "axes": [
       {"name": "pan", "channel": 0, "softLimits": [-90, 90], "maxVelocity": 90, "maxAcceleration": 180},
       {"name": "tilt", "channel": 1, "softLimits": [-30, 45], "maxVelocity": 60, "maxAcceleration": 120},
       {"name": "light", "kind": "pwm", "channel": 2}
     ],
     "dfmoco": {"motors": ["tilt", "pan"], "stepsPerDegree": 100}}
    """

func testRig() throws -> Rig {
    try RigParser.parse(text: testRigText, file: "bench.json")
}

// RigGamepad: see the issue that builds it.

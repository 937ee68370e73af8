// RigBLEControl: see the issue that builds it.

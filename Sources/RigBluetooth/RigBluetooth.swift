// RigBluetooth: see the issue that builds it.

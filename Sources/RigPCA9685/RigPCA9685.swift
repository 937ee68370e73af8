// RigPCA9685: see the issue that builds it.

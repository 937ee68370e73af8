// RigDBus: see the issue that builds it.

// RigStepSync: see the issue that builds it.

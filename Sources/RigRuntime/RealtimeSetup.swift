import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// What the loop thread got of the real-time settings it asked for.
public struct RealtimeGrant: Sendable, Equatable, CustomStringConvertible {
    public var timerSlack = false
    public var fifo = false
    public var memoryLocked = false

    public var description: String {
        "timer slack 1 ns: \(timerSlack ? "yes" : "no"), SCHED_FIFO: \(fifo ? "yes" : "no (not permitted)"), mlockall: \(memoryLocked ? "yes" : "no (not permitted)")"
    }
}

public enum RealtimeSetup {
    /// Called on the loop thread itself: minimal timer slack (halves the median wake-up
    /// lateness), SCHED_FIFO and locked memory when the process is allowed them.
    public static func apply(fifoPriority: Int32 = 50, lockMemory: Bool = true) -> RealtimeGrant {
        var grant = RealtimeGrant()
        grant.timerSlack = rig_set_timer_slack(1) == 0
        var param = sched_param()
        param.sched_priority = fifoPriority
        grant.fifo = sched_setscheduler(0, SCHED_FIFO, &param) == 0
        if lockMemory {
            grant.memoryLocked = mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0
        }
        return grant
    }
}

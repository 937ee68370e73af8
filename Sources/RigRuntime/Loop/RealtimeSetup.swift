import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the loop thread got of the real-time settings it asked for.
public struct RealtimeGrant: Sendable, Equatable, CustomStringConvertible {
    public var timerSlack = false
    public var fifo = false
    public var memoryLocked = false
    /// The lock is `MCL_ONFAULT` (pages are locked as they are first touched) rather than
    /// every mapped page at once; false on a kernel older than 4.4, which locks everything.
    public var lockedOnFault = false

    public var description: String {
        let lock = memoryLocked ? (lockedOnFault ? "yes (on fault)" : "yes") : "no (not permitted)"
        return "timer slack 1 ns: \(timerSlack ? "yes" : "no"), SCHED_FIFO: \(fifo ? "yes" : "no (not permitted)"), mlockall: \(lock)"
    }
}

public enum RealtimeSetup {
    /// How much of the loop thread's stack is touched after locking, so that its first deep
    /// call does not fault a new stack page in mid-run.
    public static let prefaultedStackBytes = 256 * 1024

    /// Called on the loop thread itself: minimal timer slack (halves the median wake-up
    /// lateness), SCHED_FIFO and locked memory when the process is allowed them.
    ///
    /// Memory is locked with `MCL_ONFAULT`: every page the process has touched or touches
    /// later stays in RAM, but pages nobody touches are not read in. Locking every mapped
    /// page (`MCL_CURRENT` alone) read in and pinned all of Foundation and ICU's data, which
    /// the loop never runs: 89 MB resident instead of 27 MB on a 512 MB board. The price is
    /// that a code page the loop first needs mid-run (a path the first ticks did not take)
    /// costs one page fault then; `LoopResult.pageFaults` counts them, and `rig bench loop`
    /// reports them. The stack is touched here, so it never faults.
    /// The loop thread's SCHED_FIFO priority (the units' `LimitRTPRIO=50` allows it).
    public static let fifoPriority: Int32 = 50

    public static func apply(fifoPriority: Int32 = RealtimeSetup.fifoPriority, lockMemory: Bool = true) -> RealtimeGrant {
        var grant = RealtimeGrant()
        grant.timerSlack = rig_set_timer_slack(1) == 0
        var param = sched_param()
        param.sched_priority = fifoPriority
        grant.fifo = sched_setscheduler(0, SCHED_FIFO, &param) == 0
        if grant.fifo { loopIsRealtime.store(true, ordering: .relaxed) }
        if lockMemory {
            if mlockall(Int32(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) == 0 {
                grant.memoryLocked = true
                grant.lockedOnFault = true
            } else if errno == EINVAL {
                grant.memoryLocked = mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0
            }
            if grant.memoryLocked { rig_prefault_stack(prefaultedStackBytes) }
        }
        return grant
    }
}

extension RealtimeSetup {
    /// Whether a control loop of this process got SCHED_FIFO: the threads that time a
    /// group's shot then ask for it too.
    private static let loopIsRealtime = Atomic<Bool>(false)

    /// What the last thread that timed a shot got (nil before the first).
    private static let shotThreads = Mutex<RealtimeGrant?>(nil)

    /// Called on a thread that times a shot to an instant (a group's shot timer, a GPIO
    /// camera's shutter edge): minimal timer slack, and SCHED_FIFO just below the loop's
    /// when the loop got it. At normal priority its wake-up was 146–547 ms late at p99
    /// beside `stress-ng --cpu 2`; at FIFO about 0.1 ms (docs/performance.md, round 6).
    /// Falls back to normal priority when the loop did not get SCHED_FIFO (`--no-realtime`,
    /// or not permitted) or the thread is refused it: `shotThreadGrant` says which.
    @discardableResult
    public static func applyToShotThread() -> RealtimeGrant {
        var grant = RealtimeGrant()
        grant.timerSlack = rig_set_timer_slack(1) == 0
        if loopIsRealtime.load(ordering: .relaxed) {
            var param = sched_param()
            param.sched_priority = fifoPriority - 1
            grant.fifo = sched_setscheduler(0, SCHED_FIFO, &param) == 0
        }
        shotThreads.withLock { $0 = grant }
        return grant
    }

    /// What the last thread that timed a shot got (nil before the first).
    public static var shotThreadGrant: RealtimeGrant? { shotThreads.withLock { $0 } }

    /// A line for a person about the shot threads' priority once one ran (nil before).
    public static var shotThreadNote: String? {
        guard let grant = shotThreadGrant else { return nil }
        if grant.fifo { return "shot timer: SCHED_FIFO \(fifoPriority - 1), timer slack 1 ns (the loop's real-time settings)" }
        let why =
            loopIsRealtime.load(ordering: .relaxed)
            ? "SCHED_FIFO refused to its thread"
            : "the control loop did not get SCHED_FIFO (--no-realtime, or not permitted: run as root or give rig CAP_SYS_NICE / LimitRTPRIO=50)"
        return "shot timer at normal priority (\(why)): on a busy CPU a shot can be milliseconds late"
    }
}

/// Page faults the calling thread has taken so far (`getrusage(RUSAGE_THREAD)`).
public struct PageFaults: Sendable, Equatable {
    /// Faults served without I/O: a page already in the page cache, or a new zero page.
    public var minor: Int
    /// Faults that had to read the page from storage.
    public var major: Int

    public init(minor: Int, major: Int) {
        self.minor = minor
        self.major = major
    }

    public static func ofThisThread() -> PageFaults {
        var minor = 0
        var major = 0
        guard rig_thread_page_faults(&minor, &major) == 0 else { return PageFaults(minor: 0, major: 0) }
        return PageFaults(minor: minor, major: major)
    }

    public static func - (a: PageFaults, b: PageFaults) -> PageFaults {
        PageFaults(minor: a.minor - b.minor, major: a.major - b.major)
    }

    public static func + (a: PageFaults, b: PageFaults) -> PageFaults {
        PageFaults(minor: a.minor + b.minor, major: a.major + b.major)
    }
}

extension RealtimeSetup {
    /// What ``apply(fifoPriority:lockMemory:)`` would get with its defaults, tried the same
    /// way on a thread of its own that then ends, with the memory lock undone (`rig doctor`):
    /// 0 for each that was granted, else its errno.
    public static func probe() -> (fifoErrno: Int32, memoryLockErrno: Int32) {
        var result: (Int32, Int32) = (EPERM, EPERM)
        var thread = pthread_t()
        // Joined before the pointer goes out of scope.
        let created = withUnsafeMutablePointer(to: &result) { pointer -> Int32 in
            let status = pthread_create(
                &thread, nil,
                { raw in
                    let out = raw!.assumingMemoryBound(to: (Int32, Int32).self)
                    var param = sched_param()
                    param.sched_priority = RealtimeSetup.fifoPriority
                    out.pointee.0 = sched_setscheduler(0, SCHED_FIFO, &param) == 0 ? 0 : errno
                    if mlockall(Int32(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT)) == 0 || (errno == EINVAL && mlockall(Int32(MCL_CURRENT | MCL_FUTURE)) == 0) {
                        out.pointee.1 = 0
                        munlockall()
                    } else {
                        out.pointee.1 = errno
                    }
                    return nil
                }, pointer)
            if status == 0 { pthread_join(thread, nil) }
            return status
        }
        return created == 0 ? result : (created, created)
    }
}

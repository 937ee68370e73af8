import FoundationEssentials
import Glibc
import RigFormat

/// Cascable's button states, as notified on Continue/Stop Button State.
public enum BUIButtonState: UInt8, Sendable {
    case up = 0x00
    case down = 0x01
    case cancelled = 0x02
}

/// The Wait-For-Input step cycle, as a pure state machine: inputs are what Cascable wrote,
/// what the player did and timers firing; outputs are actions for the caller to carry
/// out. No clocks, no I/O: every rule is unit-tested by feeding inputs.
///
/// Semantics (the rig moves to step 1 at start, so the recipe's first shot is step 1):
/// - Each Continue Available 0→1 is one *wait*. If the rig is ready at step k and a step
///   k+1 exists, it moves there; once settled, and only if Continue Available is still
///   1, it presses Continue (0x01, then 0x00 after the press duration). Exactly one press
///   per wait.
/// - A wait that arrives while the rig is still moving (to step 1, or to the step of the
///   previous wait) is kept — one at most — and served when the rig is ready.
/// - If Continue Available drops during the move, the move finishes and nothing is
///   pressed.
/// - A wait when the rig is at the last step ends the program: nothing is pressed, or
///   Stop is pressed if `stopRecipeAtEnd` and Stop Available is 1.
/// - A fault (the program stopped early) cancels a pending press with 0x02 and presses
///   Stop if `stopOnFault` and Stop Available is 1.
/// - With an exposure guard, the move starts no earlier than that after the wait began.
/// - A User Message starting with `rig:` (`Directive`) changes what the next wait does:
///   `rig: step N` moves to step N instead of the next one, `rig: stay` presses Continue
///   without moving, `rig: home` moves to the rig's home pose and presses once settled
///   there; the wait after that goes on with the step after the one the rig left. It
///   applies to one wait; other messages keep one step per wait.
public struct BUICycle: Sendable {
    /// What a `rig:` User Message asks of the next wait.
    public enum Directive: Sendable, Equatable {
        /// Move to this step (0-based) instead of the next, and press once settled.
        case step(Int)
        /// No move: press Continue at once.
        case stay
        /// To the rig's home pose; press once settled there.
        case home

        /// Parses a User Message: nil for messages not addressed to the rig; a failure
        /// message for a `rig:` message it cannot follow. `labels` are the steps' labels.
        public static func parse(_ message: String, labels: [String]) -> Result<Directive, DirectiveError>? {
            let trimmed = message.trimmed()
            guard trimmed.lowercased().hasPrefix("rig:") else { return nil }
            let body = trimmed.dropFirst(4).trimmed()
            let valid = "valid: \"rig: step N\", \"rig: step LABEL\", \"rig: home\", \"rig: stay\""
            switch body.lowercased() {
            case "stay": return .success(.stay)
            case "home": return .success(.home)
            default:
                guard body.lowercased().hasPrefix("step ") else {
                    return .failure(DirectiveError(description: "\"\(trimmed)\" is not a rig message; \(valid)"))
                }
                let what = body.dropFirst(5).trimmed()
                if let n = Int(what) {
                    guard (1...max(labels.count, 1)).contains(n), !labels.isEmpty else {
                        return .failure(DirectiveError(description: "\"\(trimmed)\": the program has steps 1…\(labels.count)"))
                    }
                    return .success(.step(n - 1))
                }
                guard let index = labels.firstIndex(where: { $0.lowercased() == what.lowercased() }) else {
                    return .failure(DirectiveError(description: "\"\(trimmed)\": no step is labelled \"\(what)\""))
                }
                return .success(.step(index))
            }
        }
    }

    public struct DirectiveError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public struct Settings: Sendable, Equatable {
        public var pressSeconds = 0.1
        public var exposureGuardSeconds = 0.0
        public var stopRecipeAtEnd = false
        public var stopOnFault = false
        public init() {}
    }

    public enum Input: Sendable, Equatable {
        case continueAvailable(Bool)
        case stopAvailable(Bool)
        /// The player settled at step `index` (0-based).
        case ready(step: Int)
        /// The player settled at the home pose, having left step `after` (0-based; -1
        /// before the first).
        case readyAtHome(after: Int)
        /// The program's motion ended; `stopped` when by a stop or fault.
        case programEnded(stopped: Bool)
        case timer(Timer)
        /// Someone pressed the rig's own continue button: continue the recipe now, without
        /// moving (the wait counts as served).
        case manualContinue
        /// Someone pressed the rig's own stop button.
        case manualStop
        /// A User Message arrived: a `rig:` directive for the next wait, or nil (any other
        /// message) to go back to one step per wait.
        case directive(Directive?)
    }

    public enum Timer: Sendable, Equatable {
        case releaseContinue
        case releaseStop
        case exposureGuard
    }

    public enum Action: Sendable, Equatable {
        /// Move to the next step (or end the program after the last).
        case advance
        /// Move to this step (0-based) instead (a `rig: step` message).
        case goTo(step: Int)
        /// Move to the rig's home pose (a `rig: home` message).
        case goHome
        case notifyContinue(BUIButtonState)
        case notifyStop(BUIButtonState)
        case schedule(Timer, afterSeconds: Double)
        /// A line for the cycle log.
        case log(String)
    }

    public let settings: Settings
    public let stepCount: Int
    public private(set) var continueAvailable = false
    public private(set) var stopAvailable = false
    /// The step the rig is settled at, nil while it moves.
    public private(set) var readyStep: Int?
    public private(set) var presses = 0
    public private(set) var ended = false
    /// Wait For Input blocks seen (Continue Available rising), to compare with the steps.
    public private(set) var waits = 0
    /// Of `waits`, those served by `rig: home`.
    public private(set) var homeWaits = 0
    public private(set) var directive: Directive?
    private var queuedWait = false
    /// A wait being served: the rig moves for it, a press is owed when it settles.
    private var serving = false
    private var guardPending = false
    private var pressing = false

    /// - Parameter startsBeforeFirstStep: the rig waits where it stands (the player was
    ///   made with `moveToFirstStep: false`): the first wait moves it to step 1.
    public init(stepCount: Int, settings: Settings, startsBeforeFirstStep: Bool = false) {
        self.stepCount = stepCount
        self.settings = settings
        if startsBeforeFirstStep { readyStep = -1 }
    }

    public mutating func handle(_ input: Input) -> [Action] {
        var actions: [Action] = []
        switch input {
        case .continueAvailable(let available):
            let rising = available && !continueAvailable
            continueAvailable = available
            if rising {
                waits += 1
                actions.append(.log("wait for input received"))
                if ended {
                    actions += endOfProgramPress()
                } else if readyStep != nil, !serving {
                    actions += beginWait()
                } else {
                    queuedWait = true
                    actions.append(.log("rig still moving: the wait is served when it is ready"))
                }
            } else if !available {
                queuedWait = false
                if serving, !pressing {
                    actions.append(.log("continue no longer available: finishing the move without pressing"))
                    serving = false
                    guardPending = false
                }
            }
        case .stopAvailable(let available):
            stopAvailable = available
        case .ready(let step):
            actions += settled(at: step, where: "at step \(step + 1) of \(stepCount)")
        case .readyAtHome(let after):
            actions += settled(at: after, where: "at home (the next wait goes on with step \(after + 2))")
        case .programEnded(let stopped):
            ended = true
            readyStep = nil
            if stopped {
                if serving || pressing {
                    actions.append(.log("the rig stopped early: cancelling the press"))
                    actions.append(.notifyContinue(.cancelled))
                }
                serving = false
                if settings.stopOnFault, stopAvailable {
                    actions += pressStop(reason: "the rig stopped early")
                }
            }
        case .manualContinue:
            guard continueAvailable, !pressing else { break }
            serving = false
            guardPending = false
            queuedWait = false
            pressing = true
            presses += 1
            actions.append(.log("continue button pressed on the rig: continuing the recipe"))
            actions.append(.notifyContinue(.down))
            actions.append(.schedule(.releaseContinue, afterSeconds: settings.pressSeconds))
        case .directive(let directive):
            self.directive = directive
        case .manualStop:
            if stopAvailable { actions += pressStop(reason: "stop button pressed on the rig") }
        case .timer(.releaseContinue):
            if pressing {
                pressing = false
                actions.append(.notifyContinue(.up))
                actions.append(.log("released continue"))
            }
        case .timer(.releaseStop):
            actions.append(.notifyStop(.up))
        case .timer(.exposureGuard):
            if guardPending {
                guardPending = false
                if continueAvailable {
                    actions += startMove()
                } else {
                    serving = false
                }
            }
        }
        return actions
    }

    /// The rig settled (at `step`, or at home having left `step`): press for the wait being
    /// served, or serve a wait that came while it moved.
    private mutating func settled(at step: Int, where place: String) -> [Action] {
        readyStep = step
        var actions: [Action] = []
        if serving {
            serving = false
            if continueAvailable, !pressing {
                pressing = true
                presses += 1
                actions.append(.log("settled \(place): pressing continue"))
                actions.append(.notifyContinue(.down))
                actions.append(.schedule(.releaseContinue, afterSeconds: settings.pressSeconds))
            }
        } else if queuedWait, continueAvailable {
            queuedWait = false
            actions += beginWait()
        }
        return actions
    }

    private mutating func beginWait() -> [Action] {
        guard let step = readyStep else { return [] }
        if let directive {
            self.directive = nil
            switch directive {
            case .stay:
                guard continueAvailable, !pressing else { return [] }
                pressing = true
                presses += 1
                return [
                    .log("rig: stay at step \(step + 1): pressing continue without moving"), .notifyContinue(.down),
                    .schedule(.releaseContinue, afterSeconds: settings.pressSeconds),
                ]
            case .step(let target):
                serving = true
                readyStep = nil
                return [.log("rig: step \(target + 1): moving there instead of step \(step + 2)"), .goTo(step: target)]
            case .home:
                serving = true
                readyStep = nil
                homeWaits += 1
                return [.log("rig: home: moving to the home pose; the next wait goes on with step \(step + 2)"), .goHome]
            }
        }
        if step + 1 >= stepCount {
            // The wait after the last shot: the program is complete.
            readyStep = nil
            ended = true
            return [.log("last step shot: program complete"), .advance] + endOfProgramPress()
        }
        serving = true
        if settings.exposureGuardSeconds > 0 {
            guardPending = true
            return [.schedule(.exposureGuard, afterSeconds: settings.exposureGuardSeconds)]
        }
        return startMove()
    }

    private mutating func startMove() -> [Action] {
        let next = (readyStep ?? -1) + 1
        readyStep = nil
        return [.log("moving to step \(next + 1) of \(stepCount)"), .advance]
    }

    private mutating func endOfProgramPress() -> [Action] {
        guard settings.stopRecipeAtEnd else { return [] }
        guard stopAvailable else { return [.log("stopRecipeAtEnd: stop is not available in this recipe")] }
        return pressStop(reason: "end of program")
    }

    private func pressStop(reason: String) -> [Action] {
        [.log("pressing stop (\(reason))"), .notifyStop(.down), .schedule(.releaseStop, afterSeconds: settings.pressSeconds)]
    }
}

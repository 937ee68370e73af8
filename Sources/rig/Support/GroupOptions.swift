import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import RigCore
import RigFormat
import RigGroup
import Subprocess

/// `rig play --lead`: leading a group of rigs over MQTT (docs/multi-rig.md).
struct GroupOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Lead a group of rigs through this MQTT broker (mqtt://HOST:PORT or mqtts://…); default: the rig file's \"group\" broker, when --group and --followers are given.",
            valueName: "url"))
    var lead: String?

    @Option(help: ArgumentHelp("The group's name (with --lead).", valueName: "name"))
    var group: String?

    @Option(help: ArgumentHelp("The followers the leader waits for, by name, comma-separated (with --lead).", valueName: "a,b"))
    var followers: String?

    @Option(help: ArgumentHelp("This rig's name in the group (default: the rig's name).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Schedule each step this far ahead (and let its order expire then); 0.2…60 s.", valueName: "seconds"))
    var leadTime: Double = 1

    @Option(help: ArgumentHelp("Refuse to start when a rig's clock may be off by more (chrony's offset + error).", valueName: "ms"))
    var clockBound: Double = 1

    @Option(
        help: ArgumentHelp(
            "Broker user, password and TLS CA: a JSON file only you may read (chmod 600); default: the rig file's \"group\" credentials.", valueName: "file"))
    var credentials: String?

    @Option(help: ArgumentHelp("How long the leader waits for its followers before refusing.", valueName: "seconds"))
    var waitFollowers: Double = 120

    /// This play leads a group: `--lead`, or `--group` with `--followers` (the rig file's broker).
    var leads: Bool { lead != nil || group != nil && followers != nil }

    func validate() throws {
        guard leads else {
            if group != nil || followers != nil {
                throw ValidationError("--group and --followers go together (and with --lead URL, or the rig file's \"group\" broker)")
            }
            return
        }
        guard group != nil else { throw ValidationError("--lead needs --group NAME") }
        guard let followers, !followers.isEmpty else { throw ValidationError("--lead needs --followers NAME,NAME (the rigs it waits for)") }
        guard (0.2...60).contains(leadTime) else { throw ValidationError("--lead-time \(format(leadTime)) is out of range; valid: 0.2…60") }
        guard clockBound > 0, clockBound.isFinite else { throw ValidationError("--clock-bound must be > 0 ms") }
        guard waitFollowers > 0, waitFollowers.isFinite else { throw ValidationError("--wait-followers must be > 0 s") }
    }
}

/// What a play in a group needs, from `rig play --lead` or `rig follow`.
struct GroupRequest {
    /// Nil: the rig file's `"group"` broker.
    var broker: String?
    var group: String
    var name: String?
    var role: GroupRole
    var leadSeconds: Double = 1
    var clockBoundMs: Double = 1
    var credentials: String?
    var waitSeconds: Double = 120

    init(broker: String?, group: String, name: String?, role: GroupRole, credentials: String?) {
        self.broker = broker
        self.group = group
        self.name = name
        self.role = role
        self.credentials = credentials
    }

    init?(_ options: GroupOptions) {
        guard options.leads, let group = options.group else { return nil }
        let followers = (options.followers ?? "").split(separator: ",").map { String($0).trimmed() }.filter { !$0.isEmpty }
        self.init(broker: options.lead, group: group, name: options.name, role: .leader(followers: followers), credentials: options.credentials)
        leadSeconds = options.leadTime
        clockBoundMs = options.clockBound
        waitSeconds = options.waitFollowers
    }

    /// The settings, checked (exit 2 for a bad name, address or credentials file).
    func settings(rig: Rig, sha: String, firstStep: Int) throws -> GroupSettings {
        func refuse(_ message: String) -> ExitCode {
            printError("error: \(message)")
            return ExitCode(2)
        }
        // The rig file's "group" section fills what the command line leaves out (it was checked on load).
        let configured: GroupConfig
        do { configured = try GroupConfig.parse(rig.group) } catch { throw refuse(error.description) }
        guard let broker = broker ?? configured.broker else {
            throw refuse("no broker: give --broker mqtt://HOST:PORT (--lead for a leader), or \"group\": {\"broker\": …} in the rig file")
        }
        let address: BrokerAddress
        switch BrokerAddress.parse(broker) {
        case .success(let a): address = a
        case .failure(let problem): throw refuse(problem.description)
        }
        if let problem = GroupTopics.problem(name: group, what: "--group") { throw refuse(problem) }
        let own = name ?? configured.name ?? String(rig.name.map { $0 == " " ? "-" : $0 })
        if let problem = GroupTopics.problem(name: own, what: name == nil ? "the rig's name (give --name)" : "--name") { throw refuse(problem) }
        if case .leader(let followers) = role {
            for follower in followers {
                if let problem = GroupTopics.problem(name: follower, what: "--followers") { throw refuse(problem) }
            }
            if followers.contains(own) { throw refuse("--followers names this rig (\(own)), the leader") }
        }
        var credentialsRead = BrokerCredentials()
        if let credentials = credentials ?? configured.credentials {
            do { credentialsRead = try BrokerCredentials.read(path: credentials) } catch let error as FileError {
                throw refuse(error.description)
            } catch { throw refuse("\(error)") }
        }
        var settings = GroupSettings(group: group, name: own, role: role, broker: address, credentials: credentialsRead)
        settings.leadSeconds = leadSeconds
        settings.clockBoundNs = Int64(clockBoundMs * 1e6)
        settings.sha = sha
        settings.firstStep = firstStep
        return settings
    }
}

extension ClockReport {
    /// This rig's clock as chrony sees it now (`chronyc -c -n tracking`; chronyc gives up
    /// on its own within a few seconds when chronyd does not answer).
    static func measured() -> ClockReport {
        ClockReport.current {
            let candidates: [String] = ["/usr/bin/chronyc", "/bin/chronyc"]
            guard let chronyc = candidates.first(where: { access($0, X_OK) == 0 }) else {
                return .failure(ClockReadFailure("chrony is not installed (apt-get install chrony)"))
            }
            switch childRun(chronyc, ["-c", "-n", "tracking"], quiet: true) {
            case .failure(let why): return .failure(ClockReadFailure("chronyc did not start: \(why)"))
            case .success((.exited(0), let output)): return .success(String(decoding: output, as: UTF8.self))
            case .success: return .failure(ClockReadFailure("chronyd is not running or not synchronised (chronyc tracking failed)"))
            }
        }
    }
}

import Dispatch
import FoundationEssentials
import Glibc
import Logging
import RigBLEControl
import RigBluetooth
import RigCore
import RigDBus
import RigDevices
import RigFormat
import RigGPhoto2
import RigGamepad
import RigGroup
import RigPCA9685
import RigRuntime
import RigStepSync
import Subprocess
import Synchronization

/// One line of `rig doctor`: what was checked, how it stands, and the fix when it is not ok.
struct DoctorFinding: Sendable, Equatable {
    enum Level: String, Sendable {
        case ok
        case warning
        case problem
    }

    var check: String
    var level: Level
    var message: String
    var fix: String?

    static func ok(_ check: String, _ message: String) -> DoctorFinding { DoctorFinding(check: check, level: .ok, message: message) }
    static func warning(_ check: String, _ message: String, fix: String) -> DoctorFinding {
        DoctorFinding(check: check, level: .warning, message: message, fix: fix)
    }
    static func problem(_ check: String, _ message: String, fix: String) -> DoctorFinding {
        DoctorFinding(check: check, level: .problem, message: message, fix: fix)
    }

    var line: String {
        let tag = level == .ok ? "ok     " : level == .warning ? "warning" : "problem"
        return "\(tag)  \(check): \(message)" + (fix.map { "\n         fix: \($0)" } ?? "")
    }

    var json: String {
        "{\"check\":\(JSONText.string(check)),\"status\":\"\(level.rawValue)\",\"message\":\(JSONText.string(message))"
            + (fix.map { ",\"fix\":\(JSONText.string($0))" } ?? "") + "}"
    }
}

/// The checks `rig doctor` runs for a rig on this machine. None moves anything or writes
/// to a device: the PCA9685 is read (MODE1, PRE_SCALE), GPIO lines are looked at, not
/// requested, Bluetooth is asked, not connected.
enum Doctor {
    /// Every check for `rig` (and the programs, each checked as `rig check` does).
    static func run(rig: Rig, rigPath: String, programs: [String], scanSeconds: Double) -> [DoctorFinding] {
        var findings: [DoctorFinding] = [.ok("rig file", "\(rigPath): \(rig.axes.count) axes on \(rig.output.type) at \(format(rig.loopRateHz)) Hz")]
        findings += programs.map(program)
        let output = try? OutputDrivers.config(rig)
        switch output {
        case .sim?, nil: findings.append(.ok("output", "the simulated rig: no hardware needed"))
        case .pca9685(let config)?: findings += pca9685(config)
        case .blecontrol(let config)?: findings += bluetooth(adapter: config.adapter, board: config, scanSeconds: scanSeconds)
        }
        // Every section was read on load (`Devices.check`).
        let stepSync = rig.stepSync == nil ? nil : try? StepSyncConfig.parse(rig.stepSync)
        if let stepSync, case .blecontrol(let config)? = output, config.adapter == stepSync.adapter {
            // Checked above with the board.
        } else if let stepSync {
            findings += bluetooth(adapter: stepSync.adapter, board: nil, scanSeconds: 0)
        }
        if let stepSync, stepSync.requirePairing { findings.append(pairedPhones(rigPath: rigPath)) }
        findings += gpio(rig)
        if let section = rig.imu { findings += imu(section) }
        if let camera = rig.camera, camera.type == GPhoto2CameraConfig.type, let config = try? GPhoto2CameraConfig.parse(camera) {
            findings += gphoto2(config)
        }
        findings += CameraBackends.outputFolders(rig).map(downloadFolder)
        findings.append(gamepad())
        findings += realtime()
        findings += power()
        findings += directories()
        findings.append(clock())
        findings += group(rig)
        return findings
    }

    // MARK: programs

    /// The phones the Cascable peripheral takes writes from (`rig pair`).
    static func pairedPhones(rigPath: String) -> DoctorFinding {
        guard let list = PairedPhones.inDefaultDirectory() else {
            return .problem("paired phones", "no state directory for the list", fix: "set HOME or XDG_STATE_HOME")
        }
        let phones: [PairedPhones.Phone]
        do { phones = try list.load() } catch {
            return .problem("paired phones", "\(error)", fix: "fix or remove \(list.filePath), then `rig pair --rig \(rigPath)`")
        }
        guard !phones.isEmpty else {
            return .warning(
                "paired phones", "no phone paired: Cascable's writes will be refused",
                fix: "run `rig pair --rig \(rigPath)` and pair the phone")
        }
        return .ok("paired phones", phones.map { phone in phone.name.map { "\($0) (\(phone.address))" } ?? phone.address }.joined(separator: ", "))
    }

    static func program(_ path: String) -> DoctorFinding {
        let check = "program"
        let parsed: Program
        do {
            parsed = try ProgramParser.parse(text: FileLoading.readText(path), file: path, loadRig: FileLoading.rigLoader(programPath: path))
        } catch {
            return .problem(check, "\(error)", fix: "correct the file (rig check \(path) says the same)")
        }
        let report = FeasibilityChecker.check(
            rig: parsed.rig, motion: parsed.motion, startPose: parsed.rig.homePose, shooting: ShootSetup.checkPlan(parsed))
        if !report.feasible || !report.intervalMisses.isEmpty {
            let first = report.problems.first.map { "\($0)" } ?? IntervalMiss.summary(report.intervalMisses) ?? "infeasible"
            return .problem(
                check, "\(path): breaks the rig's limits: \(elided(first, maxCharacters: 300))",
                fix: "rig check \(path) lists every frame; slow the move or widen the limits")
        }
        return .ok(check, "\(path): \(parsed.kind.rawValue), within every limit")
    }

    // MARK: PCA9685 over I2C

    static func pca9685(_ config: PCA9685OutputConfig) -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        let check = "i2c"
        guard FileManager.default.fileExists(atPath: config.bus) else {
            let fix =
                FileManager.default.fileExists(atPath: "/sys/module/i2c_dev") || !(I2CProbe.scanAllBuses().isEmpty)
                ? "the rig file's \"bus\" names a bus this machine does not have; rig probe i2c lists the buses"
                : "enable I2C (raspi-config → Interface Options → I2C, or dtparam=i2c_arm=on in config.txt) and load i2c-dev (echo i2c-dev > /etc/modules-load.d/i2c.conf)"
            return [.problem(check, "\(config.bus) does not exist", fix: fix)]
        }
        guard access(config.bus, R_OK | W_OK) == 0 else {
            return [
                .problem(
                    check, "\(config.bus) is not readable and writable by this user",
                    fix:
                        "add the user to the group that owns it (sudo usermod -aG i2c $USER, then log in again); the package's udev rules give /dev/i2c-* to group i2c"
                )
            ]
        }
        findings.append(.ok(check, "\(config.bus) is there and open to this user"))
        do throws(I2CError) {
            let bus = try LinuxI2CBus(path: config.bus)
            let report = try I2CProbe.checkPCA9685(bus: bus, address: config.address)
            if report.looksLikePCA9685 {
                findings.append(.ok("pca9685", "\(report)"))
            } else {
                findings.append(.problem("pca9685", "\(report)", fix: "the rig file's \"address\" may name another chip; rig probe i2c lists what answers"))
            }
        } catch {
            findings.append(
                .problem(
                    "pca9685", "nothing answered at 0x\(String(config.address, radix: 16)) on \(config.bus): \(error)",
                    fix: "check the board's power (VCC 3.3 V and V+ for the servos), SDA/SCL wiring and its address jumpers; rig probe i2c lists what answers"))
        }
        return findings
    }

    /// The IMU on the camera (`"imu"`): the bus, the chip (WHO_AM_I, its configuration) and
    /// a still head's gyro reading.
    static func imu(_ section: ConfigSection) -> [DoctorFinding] {
        let config: MPU6050Config
        do throws(FileError) { config = try MPU6050Config.parse(section) } catch {
            return [.problem("imu", "\(error.message)", fix: "fix the rig file's \"imu\" section (rig check names the place)")]
        }
        guard FileManager.default.fileExists(atPath: config.bus) else {
            return [.problem("imu", "\(config.bus) does not exist", fix: "enable I2C and load i2c-dev (as for the PCA9685); rig probe i2c lists the buses")]
        }
        let chip = "the MPU-6050 at 0x\(String(config.address, radix: 16)) on \(config.bus)"
        do throws(MPU6050Error) {
            let reading = try MPU6050(config: config).restingReading()
            let offset = [reading.meanDps.x, reading.meanDps.y, reading.meanDps.z].map { fixed($0, 2) }.joined(separator: ", ")
            let said = "\(chip) answers; still, its gyro read at most \(fixed(reading.peakDps, 2)) °/s over \(reading.samples) samples (mean \(offset) °/s)"
            return reading.isStill
                ? [.ok("imu", said)]
                : [
                    .warning(
                        "imu", said,
                        fix:
                            "keep the head still while doctor runs; if it was, the gyro's offset is large: a measured settle would wait on it (rig calibrate resonance reads the IMU too)"
                    )
                ]
        } catch {
            return [
                .problem(
                    "imu", error.description,
                    fix:
                        "check its power (3.3 V), SDA/SCL on the same bus as the rig file's \"bus\", and AD0 (0x68 low, 0x69 high); rig probe i2c lists what answers"
                )
            ]
        }
    }

    // MARK: Bluetooth

    /// bluetoothd, the adapter powered, and (with a BLEControl output) the board in a scan.
    static func bluetooth(adapter: String, board: BLEControlOutputConfig?, scanSeconds: Double) -> [DoctorFinding] {
        let result =
            (try? runBlocking { () async -> [DoctorFinding] in
                var findings: [DoctorFinding] = []
                let bus: DBusConnection
                do { bus = try DBusConnection(bus: .system) } catch {
                    return [.problem("bluetooth", "no system D-Bus: \(error)", fix: "is dbus running? (systemctl status dbus)")]
                }
                defer { bus.close() }
                guard (try? await bus.nameHasOwner("org.bluez")) == true else {
                    return [
                        .problem(
                            "bluetooth", "bluetoothd is not running (nobody owns org.bluez on the system bus)",
                            fix: "sudo apt install bluez && sudo systemctl enable --now bluetooth")
                    ]
                }
                findings.append(.ok("bluetooth", "bluetoothd is running"))
                let chosen: BlueZAdapter
                do { chosen = try await BlueZAdapter.named(adapter, on: bus) } catch {
                    return findings + [
                        .problem(
                            "adapter", "\(error)",
                            fix: "sudo rfkill unblock bluetooth; bluetoothctl power on (or set \"adapter\" in the rig file to one that exists)")
                    ]
                }
                findings.append(.ok("adapter", "\(adapter) is powered"))
                guard let board, scanSeconds > 0 else { return findings }
                var filter = BlueZDeviceFilter(serviceUUID: BLEControlProfile.service.uuid, address: board.address, name: board.name)
                filter.address = board.address
                do {
                    let seen = try await BlueZCentral(bus: bus).scan(on: chosen, filter: filter, duration: .milliseconds(Int(scanSeconds * 1000)))
                    if let first = seen.first {
                        findings.append(.ok("blecontrol", "board \(first.address) \(first.name.map { "\"\($0)\"" } ?? "") seen on \(adapter)"))
                    } else {
                        findings.append(
                            .problem(
                                "blecontrol", "no BLEControl board\(board.address.map { " \($0)" } ?? "") seen on \(adapter) in \(format(scanSeconds)) s",
                                fix: "power the board; a phone connected to it hides it (disconnect); rig scan lists what advertises FFE0"))
                    }
                } catch {
                    findings.append(
                        .problem("blecontrol", "the scan failed: \(error)", fix: "bluetoothctl shows what the adapter does; is another scan running?"))
                }
                return findings
            }) ?? []
        return result
    }

    // MARK: gphoto2

    /// The camera answers: model, port, battery, and the exposure settings a program can set.
    static func gphoto2(_ config: GPhoto2CameraConfig) -> [DoctorFinding] {
        let camera: GPhoto2Camera
        do { camera = try GPhoto2Camera.open(config, within: 20, logger: Logger(label: "rig.doctor")) } catch {
            let seen = (try? GPhoto2Device.detect()) ?? []
            return [
                .problem(
                    "camera", "\(config.label): \(error)",
                    fix: seen.isEmpty
                        ? "connect the camera by USB (or join its Wi-Fi for ptpip:), switch it on and turn its auto power-off off"
                        : "libgphoto2 sees \(seen.map { "\($0.model) on \($0.port)" }.joined(separator: "; ")): fix \"model\"/\"port\" in the rig file")
            ]
        }
        defer { camera.close() }
        var findings: [DoctorFinding] = [.ok("camera", "\(camera.model) on \(camera.port) answers")]
        findings += usbAccess(port: camera.port)
        if let battery = camera.battery() {
            if BatteryLevel.isLow(battery) {
                findings.append(.warning("camera", "battery at \(battery)", fix: "charge it, or power the camera from a dummy battery for long shoots"))
            } else {
                findings.append(.ok("camera", "battery \(battery)"))
            }
        }
        if let choices = try? camera.choices() {
            let offered = CameraChoices.Setting.allCases.filter { choices.widgets[$0] != nil }.map(\.rawValue)
            findings.append(
                offered.isEmpty
                    ? .warning("camera", "offers none of shutter, aperture, iso, ev", fix: "set the mode dial to M; programs cannot set exposure otherwise")
                    : .ok("camera", "programs can set \(offered.joined(separator: ", "))"))
        }
        return findings
    }

    /// The service runs as the package's `rig` user: a USB camera's node must be open to it
    /// too (libgphoto2's udev rules give it to plugdev, which the package adds `rig` to),
    /// not only to whoever runs doctor.
    static func usbAccess(port: String, serviceUser: String = "rig") -> [DoctorFinding] {
        guard let node = DeviceAccess.usbNode(port: port), let access = DeviceAccess.of(node) else { return [] }
        let mode = String(access.mode, radix: 8)
        var findings: [DoctorFinding] = []
        for account in [DeviceAccess.Account.current] + (DeviceAccess.Account.named(serviceUser).map { [$0] } ?? []) {
            let who = account.name == serviceUser ? "the service (user \(serviceUser))" : "user \(account.name)"
            if access.allowsReadWrite(for: account) {
                findings.append(.ok("camera USB", "\(who) can open \(node) (group \(access.groupName), mode \(mode))"))
            } else {
                findings.append(
                    .problem(
                        "camera USB", "\(who) cannot open \(node) (group \(access.groupName), mode \(mode)): it cannot reach the camera",
                        fix:
                            "install libgphoto2's udev rules (Debian's libgphoto2-6 ships them: the node goes to plugdev), add \(account.name) to that group (adduser \(account.name) plugdev), then replug the camera"
                    ))
            }
        }
        return findings
    }

    // MARK: power

    /// A Raspberry Pi's under-voltage and throttling flags: a weak supply makes servos
    /// twitch and the loop late. Nothing on a machine without them.
    static func power(path: String = PiPowerFlags.sysfsPath) -> [DoctorFinding] {
        guard let flags = PiPowerFlags.read(path: path) else { return [] }
        let problems = flags.problems
        if problems.isEmpty { return [.ok("power", "no under-voltage or throttling since boot")] }
        let fix =
            "use a supply that holds 5.1 V under load (the official one) with a short thick cable, and power the servos from their own supply, not the Pi's 5 V pin"
        if flags.underVoltageNow || flags.throttledNow {
            return [.problem("power", problems.joined(separator: ", "), fix: fix)]
        }
        return [.warning("power", problems.joined(separator: ", "), fix: fix)]
    }

    // MARK: GPIO

    /// The GPIO chip and lines the rig's camera and buttons use: there, and free.
    static func gpio(_ rig: Rig) -> [DoctorFinding] {
        var wanted: [(chip: String, line: Int, what: String)] = []
        if let camera = rig.camera, camera.type == GPIOCameraConfig.type, let lines = try? GPIOCameraConfig.parse(camera, buttons: nil) {
            for line in lines.lines { wanted.append((lines.chip, line, "camera")) }
        }
        if let buttons = try? ButtonsConfig.parse(rig.buttons) {
            for (line, what) in buttons.usedLines { wanted.append((buttons.chip, line, what)) }
        }
        guard !wanted.isEmpty else { return [] }
        var findings: [DoctorFinding] = []
        for chip in Set(wanted.map(\.chip)).sorted() {
            let path = chip.hasPrefix("/") ? chip : "/dev/" + chip
            guard FileManager.default.fileExists(atPath: path) else {
                findings.append(
                    .problem("gpio", "\(path) does not exist", fix: "the rig file names a GPIO chip this machine does not have (gpiodetect lists them)"))
                continue
            }
            guard access(path, R_OK | W_OK) == 0 else {
                findings.append(.problem("gpio", "\(path) is not open to this user", fix: "sudo usermod -aG gpio $USER, then log in again"))
                continue
            }
            let lines = wanted.filter { $0.chip == chip }
            let busy = lines.compactMap { line -> String? in
                GPIOLineInfo.consumer(chip: path, line: line.line).map { "line \(line.line) (\(line.what)) is held by \"\($0)\"" }
            }
            if busy.isEmpty {
                findings.append(.ok("gpio", "\(path): lines \(lines.map { String($0.line) }.joined(separator: ", ")) free"))
            } else {
                findings.append(
                    .problem(
                        "gpio", "\(path): \(busy.joined(separator: "; "))", fix: "stop the process that holds them (gpioinfo names it), or pick other lines"))
            }
        }
        return findings
    }

    // MARK: gamepad

    /// The first gamepad `rig jog` would take (the same search: evdev nodes with absolute
    /// axes and gamepad buttons), opened to look and closed again.
    static func gamepad() -> DoctorFinding {
        let (found, problems) = GamepadFinder().find()
        if let found {
            try? found.fd.close()
            return .ok("gamepad", "\(found.path)")
        }
        return .warning(
            "gamepad", "no gamepad\(problems.isEmpty ? "" : " (" + problems.joined(separator: "; ") + ")"): rig jog needs one (or --keyboard)",
            fix: "plug it in or pair it (bluetoothctl); the user needs group input")
    }

    // MARK: real time

    static func realtime() -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        // Tried as the loop does it, not guessed from the limits: root in a container may
        // still be refused.
        let (fifo, memoryLock) = RealtimeSetup.probe()
        var rt = rlimit()
        getrlimit(__rlimit_resource_t(14), &rt)  // RLIMIT_RTPRIO (not in Swift's Glibc)
        if fifo == 0 {
            findings.append(.ok("real-time", "SCHED_FIFO priority \(RealtimeSetup.fifoPriority) allowed"))
        } else {
            findings.append(
                .warning(
                    "real-time",
                    "SCHED_FIFO refused (\(String(cString: strerror(fifo))); RLIMIT_RTPRIO \(rt.rlim_cur)): the loop runs at normal priority and may be late under load",
                    fix: "run as the package's service (LimitRTPRIO=50), or add \"@rig - rtprio 50\" to /etc/security/limits.d/rig.conf"))
        }
        var memlock = rlimit()
        getrlimit(__rlimit_resource_t(8), &memlock)  // RLIMIT_MEMLOCK
        if memoryLock == 0 {
            findings.append(.ok("memlock", "this process's memory can be locked (mlockall)"))
        } else {
            findings.append(
                .warning(
                    "memlock",
                    "mlockall refused (\(String(cString: strerror(memoryLock))); RLIMIT_MEMLOCK \(memlock.rlim_cur == rlim_t.max ? "unlimited" : "\(memlock.rlim_cur / 1024) KiB")): a page fault may delay a tick",
                    fix: "run as the package's service (LimitMEMLOCK=infinity), or add \"@rig - memlock unlimited\" to /etc/security/limits.d/rig.conf"))
        }
        return findings
    }

    // MARK: directories

    static func directories() -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        if let state = StateDirectory.default() {
            let finding = writable(state, check: "state directory", purpose: "the remembered pose, shot logs, the serve token")
            findings.append(finding)
            if finding.level == .ok, let free = try? OutputPath.checkFolder(state, option: "state directory") {
                let space = PlayCommand.megabytes(free)
                if free < minimumDownloadSpace {
                    findings.append(
                        .problem(
                            "state directory", "\(state) has \(space) free: shot logs and the remembered pose may not be saved", fix: "free space on that disk")
                    )
                } else {
                    findings.append(.ok("state directory", "\(space) free for shot logs"))
                }
            }
        } else {
            findings.append(.problem("state directory", "none (HOME and XDG_STATE_HOME unset)", fix: "set XDG_STATE_HOME (the service sets /var/lib)"))
        }
        let locks = HardwareLock.directory()
        HardwareLock.prepareDirectory(locks)
        findings.append(writable(locks, check: "lock directory", purpose: "one process per output"))
        return findings
    }

    /// Whether this user can create a file in `path` (made if missing, as rig would).
    static func writable(_ path: String, check: String, purpose: String) -> DoctorFinding {
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let probe = path + "/.rig-doctor-\(getpid())"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            return .problem(
                check, "\(path) is not writable (\(String(cString: strerror(errno)))): \(purpose) cannot be kept",
                fix: "give the user \(path), or set XDG_STATE_HOME / RIG_LOCK_DIR elsewhere")
        }
        close(fd)
        unlink(probe)
        return .ok(check, "\(path) is writable")
    }

    /// A folder the camera copies frames into: one rig can write files in (made if
    /// missing, as `rig play` would), and the space left there.
    static func downloadFolder(_ folder: (what: String, path: String)) -> DoctorFinding {
        let check = "download folder"
        let free: UInt64
        do { free = try OutputPath.checkFolder(folder.path, option: folder.path) } catch {
            return .problem(
                check, "\(error.path): \(error.problem): rig play refuses to start, since no frame could be copied",
                fix:
                    "set the camera's \"download\" to a folder on a disk this user can write (e.g. /var/lib/rig/shots), or leave it out to keep frames on the card"
            )
        }
        let space = PlayCommand.megabytes(free)
        if free < minimumDownloadSpace {
            return .problem(
                check, "\(folder.path) has \(space) free: a few frames fill it", fix: "free space there, or point \"download\" at a bigger disk")
        }
        if free < PlayCommand.lowSpaceBytes {
            return .warning(check, "\(folder.path) has \(space) free", fix: "free space there before a long shoot (a raw frame is 20–60 MB)")
        }
        return .ok(check, "\(folder.path) is writable, \(space) free")
    }

    /// Under this a download folder is a problem, not a warning: a handful of raw frames.
    static let minimumDownloadSpace: UInt64 = 256 << 20

    // MARK: clock

    /// Sun and moon programs need the right time: the kernel's NTP state.
    static func clock() -> DoctorFinding {
        guard let clock = SystemClock.synchronisation(), clock.synchronised else {
            return .warning(
                "clock", "the system clock is not synchronised (no NTP): times and sky positions may be off",
                fix: "timedatectl set-ntp true, with a network; in the field, a GPS or RTC module")
        }
        return .ok("clock", "synchronised (NTP), estimated error \(clock.estimatedErrorMicroseconds) µs")
    }

    // MARK: group

    /// A rig in a group (its `"group"` section): the broker answers with the credentials,
    /// the credentials file is private, chrony holds the clock within the group's bound,
    /// and no Wi-Fi interface saves power (it turns a few ms into seconds on a Pi).
    static func group(_ rig: Rig, netDirectory: String = "/sys/class/net") -> [DoctorFinding] {
        guard rig.group != nil, let config = try? GroupConfig.parse(rig.group) else { return [] }
        var findings: [DoctorFinding] = []
        var credentials = BrokerCredentials()
        if let path = config.credentials {
            do {
                credentials = try BrokerCredentials.read(path: path)
                findings.append(.ok("group credentials", "\(path): private to its owner"))
            } catch {
                findings.append(.problem("group credentials", "\(error)", fix: "chmod 600 \(path), owned by the user rig runs as; see docs/multi-rig.md"))
            }
        }
        if let broker = config.broker, case .success(let address) = BrokerAddress.parse(broker) {
            findings.append(brokerAnswers(address, credentials: credentials, name: config.name ?? "doctor"))
        }
        let clock = ClockReport.measured()
        if let worst = clock.worstNs {
            findings.append(
                worst <= 1_000_000
                    ? .ok("group clock", "\(clock): within the group's 1 ms")
                    : .warning(
                        "group clock", "\(clock): a group's leader refuses more than 1 ms (its --clock-bound)",
                        fix: "let chrony settle (chronyc tracking); serve time from one rig or the broker's machine on the local network"))
        } else {
            findings.append(
                .warning(
                    "group clock", "\(clock.note ?? "unknown"): shots are together only as far as the clocks agree",
                    fix: "apt-get install chrony on every rig (one rig or the broker's machine can serve time to the others)"))
        }
        findings += wifiPowerSave(netDirectory: netDirectory)
        return findings
    }

    /// Connects to the group's broker as this rig would (MQTT 5, its credentials) and
    /// disconnects: ok, or why not, within 5 s.
    static func brokerAnswers(_ address: BrokerAddress, credentials: BrokerCredentials, name: String) -> DoctorFinding {
        let answer = Mutex<MQTTClient.Event?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let client: MQTTClient
        do {
            client = try MQTTClient(clientID: "rig-doctor-\(name)-\(getpid())", address: address, credentials: credentials, will: nil) { event in
                guard case .message = event else {
                    if answer.withLock({ a in
                        defer { a = a ?? event }
                        return a == nil
                    }) {
                        arrived.signal()
                    }
                    return
                }
            }
            try client.start()
        } catch {
            return .problem("group broker", "\(address): \(error)", fix: "check the rig file's \"group\" broker address")
        }
        defer { client.close() }
        let fix = "is mosquitto running there (systemctl status mosquitto), its port open, and this rig's user in its password file? See docs/multi-rig.md"
        guard arrived.wait(timeout: .now() + 5) == .success, let event = answer.withLock({ $0 }) else {
            return .problem("group broker", "\(address) did not answer within 5 s", fix: fix)
        }
        if case .disconnected(let reason) = event { return .problem("group broker", "\(address): \(reason)", fix: fix) }
        return .ok("group broker", "\(address) answers (MQTT 5)")
    }

    /// Every wireless interface's power saving (`iw dev IF get power_save`).
    static func wifiPowerSave(netDirectory: String) -> [DoctorFinding] {
        let interfaces = ((try? FileManager.default.contentsOfDirectory(atPath: netDirectory)) ?? []).sorted().filter { name in
            var info = stat()
            return stat("\(netDirectory)/\(name)/wireless", &info) == 0
        }
        guard !interfaces.isEmpty else { return [] }
        let candidates: [String] = ["/usr/sbin/iw", "/sbin/iw", "/usr/bin/iw"]
        guard let iw = candidates.first(where: { access($0, X_OK) == 0 }) else {
            return [
                .warning(
                    "wifi power save", "cannot check \(interfaces.joined(separator: ", ")): iw is not installed",
                    fix: "apt-get install iw, then iw dev \(interfaces[0]) get power_save")
            ]
        }
        return interfaces.map { interface in
            let answer: String
            switch childRun(iw, ["dev", interface, "get", "power_save"], quiet: true) {
            case .success((.exited(0), let output)): answer = String(decoding: output, as: UTF8.self)
            default: return .warning("wifi power save", "\(interface): iw could not say", fix: "iw dev \(interface) get power_save")
            }
            switch WifiPowerSave.parse(answer) {
            case true?:
                return .warning(
                    "wifi power save", "\(interface): on (a group's messages then wait for the radio to wake: ms become seconds)",
                    fix:
                        "iw dev \(interface) set power_save off; to keep it off: nmcli connection modify NAME 802-11-wireless.powersave 2 (NetworkManager)"
                )
            case false?: return .ok("wifi power save", "\(interface): off")
            case nil: return .warning("wifi power save", "\(interface): iw said \"\(answer.trimmed())\"", fix: "iw dev \(interface) get power_save")
            }
        }
    }
}

/// What `iw dev IF get power_save` says: "Power save: on" → true, "off" → false.
enum WifiPowerSave {
    static func parse(_ text: String) -> Bool? {
        guard let line = text.split(separator: "\n").first(where: { $0.lowercased().contains("power save:") }) else { return nil }
        let value = line.lowercased().split(separator: ":").last.map { String($0).trimmed() }
        return value == "on" ? true : value == "off" ? false : nil
    }
}

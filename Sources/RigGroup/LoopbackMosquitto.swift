import FoundationEssentials

/// A throwaway Debian `mosquitto` on a loopback port, as `rig bench group` and the group
/// tests start one (each by its own PID): where the broker is, its configuration, and the
/// line it logs once it listens.
public enum LoopbackMosquitto {
    /// Debian's broker (`apt-get install mosquitto`), if it is installed.
    public static var executable: String? {
        ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public static let missing = "mosquitto is not installed (Debian: apt-get install mosquitto; scripts/setup --test installs it)"

    /// Without persistence (a restart loses the retained messages, as a broker restarted
    /// without its database does), logging to stderr: everything when `logEverything`
    /// (every packet: for a test's transcript), else mosquitto's defaults (errors, warnings,
    /// notices, connections). Anyone may connect, or with `passwordFile` (made with
    /// `mosquitto_passwd`) only its users.
    public static func configuration(port: Int, logEverything: Bool, passwordFile: String? = nil) -> String {
        """
        listener \(port) 127.0.0.1
        \(passwordFile.map { "allow_anonymous false\npassword_file \($0)" } ?? "allow_anonymous true")
        persistence false
        log_dest stderr
        \(logEverything ? "log_type all" : "")
        """
    }

    /// What mosquitto logs once its socket is bound (a notice: logged at any log_type).
    public static func readyLine(port: Int) -> String { "Opening ipv4 listen socket on port \(port)" }
}

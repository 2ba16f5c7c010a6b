import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// A database on another machine: sqlive over ssh's standard input and
/// output (no port of sqlive's own), through a real OpenSSH server that the
/// test starts on localhost with keys it makes. The "other machine" is this
/// one, reached through sshd: what runs there runs as a remote login does.
@Suite("Remote databases over ssh", .serialized, .timeLimit(.minutes(3)))
struct RemoteDatabaseTests {
    static let sshd = "/usr/sbin/sshd"
    static let ssh = "/usr/bin/ssh"
    /// sshd must run as root to accept a login (it switches to the user).
    /// The suite runs on its own, when `SQLIVE_REMOTE_TESTS` is set, as
    /// `.ci/run` does after the whole suite: started beside every other
    /// suite on a two-core machine, ssh sessions and the suite's many child
    /// processes stalled each other until the time limit (twice in CI,
    /// not understood yet); alone, it takes two seconds.
    static let available =
        FileManager.default.isExecutableFile(atPath: sshd) && FileManager.default.isExecutableFile(atPath: ssh)
        && getuid() == 0 && ProcessInfo.processInfo.environment["SQLIVE_REMOTE_TESTS"] != nil

    /// An OpenSSH server on a free port of 127.0.0.1, with a host key and a
    /// client key of its own; stopped when released.
    final class SSHServer: Sendable {
        let directory: TemporaryDirectory
        let port: Int
        /// Started by the `Launcher`, which hands sshd (and so its session
        /// processes) no descriptor but its standard ones.
        let process: Launcher.Child

        init() async throws {
            directory = try TemporaryDirectory()
            for key in ["host", "client"] {
                _ = try await runCommand(
                    "/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", directory.path(key)])
            }
            try FileManager.default.copyItem(
                atPath: directory.path("client.pub"), toPath: directory.path("authorized_keys"))
            port = try Self.freePort()
            try """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(directory.path("host"))
            AuthorizedKeysFile \(directory.path("authorized_keys"))
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            StrictModes no
            UsePAM no
            PidFile \(directory.path("sshd.pid"))

            """.write(toFile: directory.path("sshd_config"), atomically: true, encoding: .utf8)
            // Privilege separation needs its directory, which the service's
            // start would make.
            try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
            process = try Launcher.start(
                RemoteDatabaseTests.sshd, ["-D", "-e", "-f", directory.path("sshd_config")],
                stdout: .file(directory.path("sshd.out")), stderr: .file(directory.path("sshd.err")))
            // Ready when it accepts a login.
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? await runCommand(RemoteDatabaseTests.ssh, arguments(["true"]))) == nil {
                guard ContinuousClock.now < deadline else {
                    throw CancellationError()
                }
                usleep(50_000)
            }
        }

        /// ssh's arguments to run `command` on the server.
        func arguments(_ command: [String]) -> [String] {
            [
                "-i", directory.path("client"), "-p", String(port), "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "127.0.0.1",
            ] + command
        }

        static func freePort() throws -> Int {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(socket) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                    bind(socket, generic, length) == 0 && getsockname(socket, generic, &length) == 0
                }
            }
            guard bound else { throw CancellationError() }
            return Int(UInt16(bigEndian: address.sin_port))
        }

        deinit {
            // Not waited for: a deinit may run on the pool, which the
            // launch needs to end (see `Launcher`); its task reaps sshd.
            process.terminate()
        }
    }

    static func makeDatabase(_ directory: TemporaryDirectory) async throws -> String {
        let path = directory.path("remote.sqlite")
        try await sqlite3(path, "CREATE TABLE players(name TEXT, score INT); INSERT INTO players VALUES ('Ann', 12);")
        return path
    }

    @Test(
        "ssh HOST sqlive --rpc: a live query sees a write made on the server side",
        .enabled(
            if: available, "needs OpenSSH's server (openssh-server), root, and SQLIVE_REMOTE_TESTS=1 (.ci/run sets it)")
    )
    func rpcOverSSH() async throws {
        let server = try await SSHServer()
        let directory = try TemporaryDirectory()
        let database = try await Self.makeDatabase(directory)
        let client = try ServerProcess(
            command: Self.ssh, arguments: server.arguments([SQLiveBinary.path, "--rpc", database]),
            directory: directory.url)
        _ = try await client.result("initialize", ["clientInfo": ["name": "remote"]])
        let registered = try await client.result(
            "liveQuery/register", ["name": "count", "sql": "SELECT count(*) FROM players"])
        #expect(registered["rows"] == [[1]])
        // On the server side: the sqlite3 shell, as the app there would write.
        _ = try await runCommand(
            Self.ssh, server.arguments(["sqlite3", database, "'INSERT INTO players VALUES (char(66, 111, 98), 7)'"]))
        let change = try await client.notification("liveQuery/changed") { $0["name"] == "count" }
        #expect(change["rows"] == [[2]])
        #expect(change["cause"] == "external")
        _ = try await client.result("shutdown")
        client.notify("exit")
        // sqlive ended on the server: ssh's output closes. (Foundation's
        // `Process` does not always notice that ssh itself has exited, so
        // the output's end is what is waited for.)
        do {
            _ = try await client.next("the end of ssh's output") { _ in false }
            Issue.record("a message after exit")
        } catch ServerProcessError.missing(_, let closed, _) {
            #expect(closed, "ssh's output stayed open: sqlive did not exit on the server")
        }
    }

    @Test(
        "ssh HOST sqlive --mcp and a scripted session: one query each, over ssh's stdio",
        .enabled(
            if: available, "needs OpenSSH's server (openssh-server), root, and SQLIVE_REMOTE_TESTS=1 (.ci/run sets it)")
    )
    func mcpAndScriptOverSSH() async throws {
        let server = try await SSHServer()
        let directory = try TemporaryDirectory()
        let database = try await Self.makeDatabase(directory)
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"remote","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT name, score FROM players"}}}"#,
        ]
        let output = try await runCommand(
            Self.ssh, server.arguments([SQLiveBinary.path, "--mcp", database]),
            input: lines.joined(separator: "\n") + "\n")
        let replies = output.split(separator: "\n").compactMap {
            try? JSONCoding.decode(JSONValue.self, from: Array($0.utf8))
        }
        let query = try #require(replies.first { $0["id"] == 2 })
        #expect(query["result"]?["structuredContent"]?["rows"] == [["Ann", 12]])
        #expect(replies.first { $0["id"] == 1 }?["result"]?["protocolVersion"] == "2025-11-25")

        let script = try await runCommand(
            Self.ssh,
            server.arguments([SQLiveBinary.path, database, "-c", "'.mode csv'", "-c", "'SELECT * FROM players'"]))
        #expect(script == "Ann,12\r\n")
    }

    @Test(
        "ssh -t HOST sqlive: the REPL on a terminal, its live query seeing a write made on the server side",
        .enabled(
            if: available, "needs OpenSSH's server (openssh-server), root, and SQLIVE_REMOTE_TESTS=1 (.ci/run sets it)"),
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux"))
    func replOverSSH() async throws {
        let server = try await SSHServer()
        let directory = try TemporaryDirectory()
        let database = try await Self.makeDatabase(directory)
        // A terminal of tmux's, on a server of its own (as the REPL's
        // terminal tests drive it).
        let socket = "sqlive-ssh-" + UUID().uuidString.prefix(8)
        @discardableResult
        func tmux(_ arguments: [String]) async throws -> String {
            try await Launcher.run("/usr/bin/tmux", ["-L", socket] + arguments).stdout
        }
        defer {
            // Not waited for (a `defer` cannot await): the launcher's task sees it through.
            _ = try? Launcher.start("/usr/bin/tmux", ["-L", socket, "kill-server"], stdout: .null, stderr: .null)
        }
        let command = (["env", "TERM=xterm", Self.ssh, "-t"] + server.arguments([SQLiveBinary.path, database]))
            .map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        try await tmux(["-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "-s", "main", command])
        func waitFor(_ text: String) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !(try await tmux(["capture-pane", "-p", "-J", "-t", "main"])).contains(text) {
                guard ContinuousClock.now < deadline else {
                    Issue.record("waited for \(text): \(try await tmux(["capture-pane", "-p", "-J", "-t", "main"]))")
                    throw CancellationError()
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await waitFor("sqlive>")
        for keys in [".panel off", ".watch n SELECT count(*) FROM players"] {
            try await tmux(["send-keys", "-t", "main", "-l", keys])
            try await tmux(["send-keys", "-t", "main", "Enter"])
        }
        try await waitFor("-- n v1")
        _ = try await runCommand(
            Self.ssh, server.arguments(["sqlite3", database, "'INSERT INTO players VALUES (char(66, 111, 98), 7)'"]))
        try await waitFor("-- n v2 (external")
        try await tmux(["send-keys", "-t", "main", "-l", ".quit"])
        try await tmux(["send-keys", "-t", "main", "Enter"])
    }
}

import ArgumentParser
import Foundation
import GRDB
import SQLiveEngine

/// `sqlive-bench`: every figure next to its anchor, both taken in the same run.
@main
struct SQLiveBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sqlive-bench",
        abstract: "Measure sqlive against its anchors (polling, GRDB ValueObservation, the sqlite3 CLI).",
        subcommands: [RunCommand.self, WriterCommand.self],
        defaultSubcommand: RunCommand.self)
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run scenarios (all by default).")

    nonisolated(unsafe) static let scenarios: [any Scenario.Type] = [
        ExternalLatency.self, ObserverEffect.self, LongStatement.self, LocalLatency.self, Burst.self, FanOut.self,
        ExternalFanOut.self, Registration.self, BigResult.self, ChangeFeed.self, KeptLive.self,
        Scripts.self, Output.self,
        RPC.self, LanguageServerScale.self,
        Footprint.self,
    ]

    @Argument(help: "Scenarios to run: \(RunCommand.scenarios.map { $0.name }.joined(separator: ", ")).")
    var names: [String] = []

    @Flag(help: "A smoke run of a few seconds (CI runs this; it asserts nothing about speed).")
    var quick = false

    func validate() throws {
        let known = Set(Self.scenarios.map { $0.name })
        for name in names where !known.contains(name) {
            throw ValidationError("unknown scenario '\(name)'")
        }
    }

    func run() async throws {
        setenv("SQLIVE_QUIET", "1", 1)
        SQLiveLog.bootstrap()
        let selected = names.isEmpty ? Self.scenarios : Self.scenarios.filter { names.contains($0.name) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sqlive-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let sqliteVersion = try await DatabaseQueue().read { db in
            try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?"
        }
        print(
            "sqlive-bench\(quick ? " --quick" : ""): \(ProcessInfo.processInfo.activeProcessorCount) cores, "
                + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, SQLite \(sqliteVersion), "
                + "\(ISO8601DateFormatter().string(from: Date()))\n")
        for scenario in selected {
            let table = try await scenario.run(quick: quick, directory: directory)
            print(table.markdown)
            print()
        }
    }
}

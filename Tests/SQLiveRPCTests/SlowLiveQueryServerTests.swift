import Foundation
import SQLiveProtocol
import SQLiveTestSupport
import Testing

/// A live query that the data makes slow, over the real binary (issue
/// #39): the others' updates go on beside it, its refresh stops at the time
/// budget given on the command line or by `initialize`, with
/// `liveQuery/error` -32014, and the query waits for the next change
/// instead of looping. The writer is the sqlite3 shell at its defaults.
@Suite("A slow live query, over the real server", .timeLimit(.minutes(3)))
struct SlowLiveQueryServerTests {
    enum BudgetGiven: String, CaseIterable, CustomStringConvertible {
        case commandLine, initializationOptions
        var description: String { rawValue }
    }

    @Test(arguments: BudgetGiven.allCases)
    func aSlowQueryStopsAtItsBudgetAndHoldsBackNoOther(_ given: BudgetGiven) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("db.sqlite")
        try await sqlite3(
            path,
            """
            PRAGMA journal_mode=wal;
            CREATE TABLE size(n INTEGER);
            INSERT INTO size VALUES (10);
            CREATE TABLE quick(x);
            """)
        let server = try ServerProcess(
            arguments: ["db.sqlite"] + (given == .commandLine ? ["--refresh-budget", "1"] : []),
            directory: directory.url)
        var params: [String: JSONValue] = ["capabilities": [:]]
        if given == .initializationOptions { params["initializationOptions"] = ["refreshBudgetMs": 1000] }
        _ = try await server.result("initialize", .object(params))
        server.notify("initialized", [:])
        // As many steps as `size` says: quick at 10, unbounded past 10^12.
        let slow =
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < (SELECT n FROM size)) "
            + "SELECT count(*) FROM n"
        let first = try await server.result("liveQuery/register", ["name": "slow", "sql": .string(slow)])
        #expect(first["rows"] == [[10]])
        _ = try await server.result("liveQuery/register", ["name": "quick", "sql": "SELECT count(*) FROM quick"])

        try await SQLite3CLI.run(path, "UPDATE size SET n = 1000000000000;")
        // While the slow refresh runs, the quick query's updates arrive.
        try await SQLite3CLI.run(path, "INSERT INTO quick VALUES (1);")
        let quick = try await server.notification("liveQuery/changed") { $0["name"] == "quick" }
        #expect(quick["rows"] == [[1]])
        let stopped = try await server.notification("liveQuery/error") { $0["name"] == "slow" }
        #expect(stopped["error"]?["code"] == -32014)
        #expect(stopped["error"]?["message"]?.stringValue?.contains("too slow to keep live") == true)
        #expect(stopped["error"]?["data"]?["budgetMs"] == 1000)
        // Stopped, it waits: more commits to what it does not read change nothing for it.
        try await SQLite3CLI.run(path, "INSERT INTO quick VALUES (2);")
        let again = try await server.notification("liveQuery/changed") { $0["name"] == "quick" }
        #expect(again["rows"] == [[2]])
        // Made quick again by the data, it comes back.
        try await SQLite3CLI.run(path, "UPDATE size SET n = 5;")
        let back = try await server.notification("liveQuery/changed") { $0["name"] == "slow" }
        #expect(back["rows"] == [[5]])
        _ = try await server.result("shutdown")
        server.notify("exit")
        #expect(try await server.waitForExit() == 0)
    }

    @Test func aBudgetOutOfRangeIsRefusedWithTheReason() async throws {
        let directory = try TemporaryDirectory()
        let outcome = try await Launcher.run(SQLiveBinary.path, ["--rpc", "--refresh-budget", "-1"])
        #expect(outcome.status == 1)
        #expect(outcome.stderr.contains("--refresh-budget must be between 0 (no limit) and 86400 seconds"))
        let server = try ServerProcess(arguments: [], directory: directory.url)
        let error = try await server.error(
            "initialize", ["capabilities": [:], "initializationOptions": ["refreshBudgetMs": -5]])
        #expect(error["code"] == -32602)
    }
}

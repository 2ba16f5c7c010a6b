import Foundation
import SQLiveEngine
import SQLiveLocks

/// 1,000 live queries over 100 tables; local writes to one table. The
/// ideal is to refresh only the 10 queries that read it.
enum FanOut: Scenario {
    static let name = "fan-out"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let tables = 100
        let perTable = 10
        let writes = quick ? 10 : 200
        let schema = (0..<tables).map { "CREATE TABLE t\($0)(id INTEGER PRIMARY KEY, v);" }.joined()
        let path = try makeDatabase(directory, "fanout.sqlite", schema)
        let database = try await LiveDatabase.open(.file(path))
        let fanOut = try await FanOutQueries(database, tables: tables, perTable: perTable)
        let arrivals = fanOut.arrivals
        let before = await database.directory.list().map(\.refreshes).reduce(0, +)
        var latency = Samples()
        for value in 1...Int64(writes) {
            let start = Monotonic.now()
            _ = try await database.execute("INSERT INTO t42(v) VALUES (?)", parameters: .positional([.integer(value)]))
            try await waitUntil("the 10 queries of t42 saw \(value)") {
                arrivals.withLock { ($0[value]?.count ?? 0) == perTable }
            }
            latency.append(arrivals.withLock { $0[value]!.last } - start)
        }
        try await Task.sleep(for: .milliseconds(100))
        let after = await database.directory.list().map(\.refreshes).reduce(0, +)
        fanOut.listener.cancel()
        await database.close()
        let perWrite = Double(after - before) / Double(writes)
        var table = ResultTable(
            scenario: name,
            note:
                "\(tables * perTable) live queries over \(tables) tables; \(writes) local single-row writes to one table."
        )
        table.add("refreshes per write", perWrite, anchor: Double(perTable), "ideal (queries reading the table)")
        table.add("refreshes per write", perWrite, anchor: Double(tables * perTable), "refresh everything")
        table.add("p50 latency, write → last of 10 updates (ms)", latency.percentile(50))
        table.add("p95 latency, write → last of 10 updates (ms)", latency.percentile(95))
        table.checks.append("each write reached exactly the \(perTable) queries of its table")
        return table
    }
}

/// Ten live queries per table, `SELECT count(*), max(v) + k FROM tN`, and
/// a listener that counts, for each value written, the updates that saw it
/// and when the last one arrived.
struct FanOutQueries {
    let arrivals = Locked([Int64: (count: Int, last: Int64)]())
    let listener: Task<Void, Never>

    init(_ database: LiveDatabase, tables: Int, perTable: Int) async throws {
        let events = database.directory.events()
        for table in 0..<tables {
            for k in 0..<perTable {
                _ = try await database.directory.register(
                    name: "t\(table)_\(k)", LiveQueryDefinition(sql: "SELECT count(*), max(v) + \(k) FROM t\(table)"))
            }
        }
        let arrivals = arrivals
        listener = Task {
            for await event in events {
                guard case .changed(let change) = event, case .integer(let value) = change.result.rows[0][1] else {
                    continue
                }
                let now = Monotonic.now()
                let k = Int64(change.name.split(separator: "_")[1])!
                arrivals.withLock {
                    $0[value - k, default: (0, 0)].count += 1
                    $0[value - k]!.last = now
                }
            }
        }
    }
}

import Foundation
import GRDB
import SQLiveEngine

/// Resident memory with 0, 100 and 1,000 live queries registered, against
/// as many GRDB `ValueObservation`s of the same queries.
enum Footprint: Scenario {
    static let name = "footprint"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let path = try makeDatabase(
            directory, "footprint.sqlite",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, v);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO t(v) SELECT i FROM n;
            """)
        var table = ResultTable(
            scenario: name,
            note: "Heap growth (MiB in use, mallinfo2) over the process's baseline; each query returns 10 rows. "
                + "Both measured in one process, sqlive first. The heap in use, not the resident pages: "
                + "after the earlier scenarios, resident memory freed by them is reused, and a growth in "
                + "resident pages came out negative (-223 MiB).")
        let database = try await LiveDatabase.open(.file(path))
        let base = heapMiB()
        let resident = residentMiB()
        var ours: [Int: Double] = [0: 0]
        var registered = 0
        for target in [100, 1000] {
            while registered < target {
                _ = try await database.directory.register(
                    name: "q\(registered)",
                    LiveQueryDefinition(sql: "SELECT id, v FROM t WHERE id % 1000 = \(registered) OR id <= 10 LIMIT 10")
                )
                registered += 1
            }
            ours[target] = heapMiB() - base
        }
        await database.close()

        let pool = try DatabasePool(path: path)
        let grdbBase = heapMiB()
        var theirs: [Int: Double] = [0: 0]
        var cancellables: [AnyDatabaseCancellable] = []
        for target in [100, 1000] {
            while cancellables.count < target {
                let sql = "SELECT id, v FROM t WHERE id % 1000 = \(cancellables.count) OR id <= 10 LIMIT 10"
                let observation = ValueObservation.tracking { db in
                    try Row.fetchAll(db, sql: sql).map { $0[1] as Int64 }
                }
                cancellables.append(
                    observation.start(
                        in: pool, scheduling: .async(onQueue: .global()), onError: { _ in }, onChange: { _ in }))
            }
            // Let the observations' first fetches land.
            try await Task.sleep(for: .milliseconds(500))
            theirs[target] = heapMiB() - grdbBase
        }
        cancellables.removeAll()
        for count in [100, 1000] {
            table.add(
                "heap growth with \(count) live queries (MiB)", ours[count]!, anchor: theirs[count]!,
                "GRDB ValueObservation"
            )
        }
        table.add("baseline resident memory (MiB)", resident)
        return table
    }
}

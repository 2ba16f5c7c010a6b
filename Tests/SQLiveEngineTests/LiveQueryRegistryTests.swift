import Foundation
import GRDB
import Testing

@testable import SQLiveEngine

/// The Reduce step and Mark's lookups, as pure values: no database runs.
@Suite("LiveQueryRegistry: Reduce and Mark")
struct LiveQueryRegistryTests {
    static let definition = LiveQueryDefinition(sql: "SELECT id, v FROM t ORDER BY id")
    static let pending = PendingChange(events: 2, cause: .external, tables: ["t"])

    static func result(_ rows: [[SQLValue]]) -> LiveQueryResult {
        LiveQueryResult(columns: ["id", "v"], rows: rows)
    }

    static func fetched(_ rows: [[SQLValue]], region: DatabaseRegion, keyColumns: [Int]? = [0])
        -> LiveQueryFetcher.Fetched
    {
        LiveQueryFetcher.Fetched(
            result: result(rows), region: region, tables: ["t"], elapsed: .milliseconds(1),
            counters: StatementCounters(), keyColumns: keyColumns)
    }

    static func region(_ sql: String) throws -> DatabaseRegion {
        try DatabaseQueue().write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v); CREATE TABLE u(w)")
            return try db.makeStatement(sql: sql).databaseRegion
        }
    }

    @Test(
        "A changed result reaches the active members once, at their next version; paused ones note it; equal ones send nothing"
    )
    func reduceChanges() throws {
        let region = try Self.region(Self.definition.sql)
        var registry = LiveQueryRegistry()
        let first: [[SQLValue]] = [[.integer(1), .text("a")], [.integer(2), .text("b")]]
        registry.record(Self.fetched(first, region: region), home: .committed, for: Self.definition, readAt: 1)
        let (rows, changesOnly, paused) = (LiveQueryID.next(), LiveQueryID.next(), LiveQueryID.next())
        registry.add(rows, name: "rows", Self.definition, delivered: Self.result(first))
        registry.add(
            changesOnly, name: "changes", Self.definition, delivery: .changesOnly, delivered: Self.result(first))
        registry.add(paused, name: "paused", Self.definition, delivered: Self.result(first))
        let lastActive = registry.pause(paused)
        #expect(lastActive == false)
        _ = registry.markPaused([Self.definition], cause: .external)

        let second: [[SQLValue]] = [[.integer(1), .text("a")], [.integer(2), .text("B")]]
        let reduced = registry.reduce(
            .success(Self.fetched(second, region: region)), for: Self.definition, pending: Self.pending, now: Date(),
            readAt: 2)
        #expect(reduced.newRegion == nil)
        let changes = reduced.events.compactMap { item -> LiveQueryChange? in
            if case .changed(let change) = item.event { return change }
            return nil
        }
        // In registration order, each with its registration.
        #expect(changes.map(\.name) == ["rows", "changes"])
        #expect(reduced.events.map(\.id) == [rows, changesOnly])
        #expect(
            changes.allSatisfy { $0.version == 2 && $0.coalesced == 2 && $0.cause == .external && $0.tables == ["t"] })
        #expect(changes.first { $0.name == "rows" }?.changes == nil)
        #expect(changes.first { $0.name == "changes" }?.changes?.changed.map(\.at) == [1])
        #expect(registry.queries[paused]?.missed?.events == 1)
        #expect(registry.queries[paused]?.version == 1)

        // The same result again: nothing to send.
        let again = registry.reduce(
            .success(Self.fetched(second, region: region)), for: Self.definition, pending: Self.pending, now: Date(),
            readAt: 2)
        #expect(again.events.isEmpty)
    }

    @Test("A failure is told once and widens the region to everything; the recovery is a change")
    func reduceFailures() throws {
        let region = try Self.region(Self.definition.sql)
        var registry = LiveQueryRegistry()
        let rows: [[SQLValue]] = [[.integer(1), .text("a")]]
        registry.record(Self.fetched(rows, region: region), home: .committed, for: Self.definition, readAt: 1)
        let query = LiveQueryID.next()
        registry.add(query, name: "q", Self.definition, delivered: Self.result(rows))
        let error = SQLiveError.invalidLiveQuery("no such table: t")
        let failed = registry.reduce(
            .failure(error), for: Self.definition, pending: Self.pending, now: Date(), readAt: 2)
        #expect(failed.events.map(\.event) == [.failed(name: "q", error: error)])
        #expect(failed.events.map(\.id) == [query])
        #expect(failed.newRegion?.isFullDatabase == true)
        // Every change now concerns it, so that it recovers.
        #expect(registry.definitions(affectedBy: .external(["u"])) == [Self.definition])
        let repeated = registry.reduce(
            .failure(error), for: Self.definition, pending: Self.pending, now: Date(), readAt: 2)
        #expect(repeated.events.isEmpty)
        let recovered = registry.reduce(
            .success(Self.fetched(rows, region: region)), for: Self.definition, pending: Self.pending, now: Date(),
            readAt: 2)
        #expect(recovered.newRegion == region)
        #expect(recovered.events.count == 1)
        #expect(registry.definitions(affectedBy: .external(["u"])).isEmpty)
        #expect(registry.definitions(affectedBy: .external(["T"])) == [Self.definition])
    }

    @Test("Mark: sqlive's own writes find the evaluations whose columns they touch")
    func markLocal() throws {
        var registry = LiveQueryRegistry()
        let narrow = LiveQueryDefinition(sql: "SELECT v FROM t")
        registry.record(Self.fetched([], region: try Self.region(narrow.sql)), home: .committed, for: narrow, readAt: 1)
        let id = LiveQueryID.next()
        registry.add(id, name: "narrow", narrow, delivered: Self.result([]))
        #expect(registry.definitions(affectedBy: .local([.update(tableName: "t", columnNames: ["v"])])) == [narrow])
        #expect(registry.definitions(affectedBy: .local([.update(tableName: "t", columnNames: ["id"])])).isEmpty)
        #expect(registry.definitions(affectedBy: .local([.insert(tableName: "u")])).isEmpty)
        _ = registry.remove(id)
        #expect(registry.evaluations.isEmpty)
        #expect(registry.definitions(affectedBy: .local([.insert(tableName: "t")])).isEmpty)
    }
}

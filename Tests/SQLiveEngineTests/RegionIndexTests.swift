import GRDB
import Testing

@testable import SQLiveEngine

@Suite("RegionIndex: regions by the tables they read")
struct RegionIndexTests {
    /// The region and tables of a statement, as the fetcher finds them.
    static func region(_ sql: String, _ db: Database) throws -> (DatabaseRegion, [String]) {
        let region = try db.makeStatement(sql: sql).databaseRegion
        return (region, try LiveQueryFetcher.tables(in: region, db))
    }

    @Test("A change finds exactly the regions it modifies; moved and removed keys leave no trace")
    func lookups() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE a(x, y); CREATE TABLE b(z); CREATE TABLE \"Mixed\"(m)")
            var index = RegionIndex<String>()
            for (key, sql) in [
                ("ax", "SELECT x FROM a"), ("ay", "SELECT y FROM a"), ("b", "SELECT z FROM b"),
                ("ab", "SELECT x, z FROM a, b"), ("mixed", "SELECT m FROM Mixed"),
            ] {
                let (region, tables) = try Self.region(sql, db)
                index.set(key, region: region, tables: tables)
            }
            #expect(Set(index.keys(modifiedBy: .update(tableName: "a", columnNames: ["x"]))) == ["ax", "ab"])
            #expect(Set(index.keys(modifiedBy: .update(tableName: "a", columnNames: ["y"]))) == ["ay"])
            #expect(Set(index.keys(modifiedBy: .insert(tableName: "b"))) == ["b", "ab"])
            #expect(Set(index.keys(modifiedBy: .delete(tableName: "MIXED"))) == ["mixed"])
            #expect(index.keys(readingAnyOf: ["a"]) == ["ax", "ay", "ab"])
            #expect(!index.isModified(byEventsOfKind: .insert(tableName: "other")))
            // A key that now reads another table leaves the old one.
            let (region, tables) = try Self.region("SELECT z FROM b", db)
            index.set("ax", region: region, tables: tables)
            #expect(Set(index.keys(modifiedBy: .update(tableName: "a", columnNames: ["x"]))) == ["ab"])
            index.remove("ab")
            #expect(index.keys(modifiedBy: .update(tableName: "a", columnNames: ["x"])).isEmpty)
            #expect(index.keys(readingAnyOf: ["b"]) == ["ax", "b"])
            // A full-database region (a failing query) is asked about everything.
            index.set("failing", region: .fullDatabase, tables: [])
            #expect(index.keys(modifiedBy: .insert(tableName: "anything")) == ["failing"])
            #expect(index.isModified(byEventsOfKind: .insert(tableName: "anything")))
            index.removeAll()
            #expect(index.isEmpty && !index.isModified(byEventsOfKind: .insert(tableName: "a")))
        }
    }
}

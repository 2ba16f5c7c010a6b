import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("The session's watch table")
struct WatchTableTests {
    static func snapshot(_ name: String, version: Int = 1, rows: [[SQLValue]] = []) -> LiveQuerySnapshot {
        LiveQuerySnapshot(name: name, version: version, result: LiveQueryResult(columns: ["n"], rows: rows), tables: [])
    }

    static func change(_ name: String, _ version: Int, rows: [[SQLValue]] = []) -> LiveQueryChange {
        LiveQueryChange(
            name: name, version: version, result: LiveQueryResult(columns: ["n"], rows: rows),
            previous: LiveQueryResult(columns: ["n"], rows: []), cause: .external, coalesced: 1,
            elapsed: .milliseconds(1))
    }

    @Test("A change prints once, in order; an older or unknown one never")
    func printsOnceInOrder() {
        let table = WatchTable()
        table.didRegister(Self.snapshot("a"), replaced: false)
        #expect(table.take(Self.change("a", 2), shown: true))
        #expect(!table.take(Self.change("a", 2), shown: true))
        #expect(!table.take(Self.change("a", 1), shown: true))
        #expect(!table.take(Self.change("b", 5), shown: true))
        #expect(table.printedVersions == ["a": 2])
    }

    @Test("A redefinition never goes back; removing forgets")
    func redefinitionAndRemoval() {
        let table = WatchTable()
        table.didRegister(Self.snapshot("a"), replaced: false)
        _ = table.take(Self.change("a", 4), shown: true)
        table.didRegister(Self.snapshot("a", version: 2), replaced: true)
        #expect(table.printedVersions == ["a": 4])
        table.didRegister(Self.snapshot("b"), replaced: false)
        #expect(table.names == ["a", "b"])
        table.remove("a")
        #expect(table.names == ["b"])
        #expect(!table.contains("a"))
        table.remove(nil)
        #expect(table.isEmpty)
    }

    @Test("The panel's entries are the table's: a change printed by any thread is the one the panel shows")
    func panelEntriesAreTheTables() {
        let table = WatchTable(keepsPanelEntries: true)
        table.didRegister(Self.snapshot("a", rows: [[.integer(1)]]), replaced: false)
        table.didRegister(Self.snapshot("b"), replaced: false)
        #expect(table.panelEntries.map(\.name) == ["a", "b"], "in registration order")
        _ = table.take(Self.change("a", 2, rows: [[.integer(2)]]), shown: false)
        table.setPaused("b", true)
        #expect(table.fail("b", message: "no such table: t"))
        #expect(!table.fail("gone", message: "x"))
        let entries = table.panelEntries
        #expect(entries[0].version == 2 && entries[0].result.rows == [[.integer(2)]])
        #expect(entries[0].previous?.rows == [[.integer(1)]])
        #expect(entries[1].paused && entries[1].error == "no such table: t")
        // Drawn: the next version is highlighted against it; a version newer
        // than the one drawn is not marked drawn.
        _ = table.take(Self.change("a", 3, rows: [[.integer(3)]]), shown: false)
        table.didDraw(entries)
        #expect(table.panelEntries[0].drawn == false)
        table.didDraw(table.panelEntries)
        _ = table.take(Self.change("a", 4, rows: [[.integer(4)]]), shown: false)
        #expect(table.panelEntries[0].previous?.rows == [[.integer(3)]])
        // Without a panel, only versions are kept.
        let plain = WatchTable()
        plain.didRegister(Self.snapshot("a", rows: [[.integer(1)]]), replaced: false)
        #expect(plain.panelEntries.isEmpty)
    }

    @Test(".wait ends on a change printed since the last wait, once")
    func waitConsumesChanges() {
        let table = WatchTable()
        table.didRegister(Self.snapshot("a"), replaced: false)
        table.didRegister(Self.snapshot("b"), replaced: false)
        #expect(!table.takeChangeSinceWait(nil))
        _ = table.take(Self.change("b", 2), shown: true)
        #expect(!table.takeChangeSinceWait("a"))
        #expect(table.takeChangeSinceWait("b"))
        #expect(!table.takeChangeSinceWait("b"))
        _ = table.take(Self.change("a", 2), shown: true)
        // Any query: the wait is over for all of them.
        #expect(table.takeChangeSinceWait(nil))
        #expect(!table.takeChangeSinceWait("a"))
    }
}

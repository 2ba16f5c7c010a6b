import Testing

@testable import SQLiveREPL

@Suite("The session's watch table")
struct WatchTableTests {
    @Test("A change prints once, in order; an older or unknown one never")
    func printsOnceInOrder() {
        var table = WatchTable()
        table.didRegister("a", version: 1)
        let r1 = table.takeIfNew("a", version: 2)
        #expect(r1)
        let r2 = table.takeIfNew("a", version: 2)
        #expect(!r2)
        let r3 = table.takeIfNew("a", version: 1)
        #expect(!r3)
        let r4 = table.takeIfNew("b", version: 5)
        #expect(!r4)
        #expect(table.printedVersions == ["a": 2])
    }

    @Test("A redefinition never goes back; removing forgets")
    func redefinitionAndRemoval() {
        var table = WatchTable()
        table.didRegister("a", version: 1)
        _ = table.takeIfNew("a", version: 4)
        table.didRegister("a", version: 2)
        #expect(table.printedVersions == ["a": 4])
        table.didRegister("b", version: 1)
        #expect(table.names == ["a", "b"])
        table.remove("a")
        #expect(table.names == ["b"])
        #expect(!table.contains("a"))
        table.remove(nil)
        #expect(table.isEmpty)
    }

    @Test("What an echo printed is taken back, never lowering a version")
    func echoTakenBack() {
        var table = WatchTable()
        table.didRegister("a", version: 3)
        table.didRegister("b", version: 1)
        table.didPrint(["a": 2, "b": 4, "gone": 9])
        #expect(table.printedVersions == ["a": 3, "b": 4])
    }

    @Test(".wait ends on a change printed since the last wait, once")
    func waitConsumesChanges() {
        var table = WatchTable()
        table.didRegister("a", version: 1)
        table.didRegister("b", version: 1)
        let r5 = table.takeChangeSinceWait(nil)
        #expect(!r5)
        _ = table.takeIfNew("b", version: 2)
        let r6 = table.takeChangeSinceWait("a")
        #expect(!r6)
        let r7 = table.takeChangeSinceWait("b")
        #expect(r7)
        let r8 = table.takeChangeSinceWait("b")
        #expect(!r8)
        _ = table.takeIfNew("a", version: 2)
        // Any query: the wait is over for all of them.
        let r9 = table.takeChangeSinceWait(nil)
        #expect(r9)
        let r10 = table.takeChangeSinceWait("a")
        #expect(!r10)
    }
}

import Foundation
import SQLiveEngine
import Testing

@testable import SQLiveREPL

private let esc = "\u{1B}"

@Suite("Live panel: escape sequences")
struct PanelScreenTests {
    @Test func showMakesRoomAtTheTopThenSetsTheRegion() {
        // Three blank rows under the cursor (index, up), the rows pushed down
        // from the top (insert lines), the cursor back on its line, then the
        // scroll region under the panel, the cursor kept.
        #expect(
            PanelScreen.show(height: 3, rows: 24)
                == "\(esc)D\(esc)D\(esc)D\(esc)[3A\(esc)7\(esc)[1;1H\(esc)[3L\(esc)8\(esc)[3B"
                + "\(esc)7\(esc)[4;24r\(esc)8")
    }

    @Test func growAndShrinkMoveTheRowsUnderThePanel() {
        #expect(
            PanelScreen.grow(from: 3, to: 5, rows: 24)
                == "\(esc)D\(esc)D\(esc)[2A\(esc)7\(esc)[4;1H\(esc)[2L\(esc)8\(esc)[2B\(esc)7\(esc)[6;24r\(esc)8")
        #expect(
            PanelScreen.shrink(from: 5, to: 3, rows: 24) == "\(esc)7\(esc)[4;24r\(esc)[4;1H\(esc)[2M\(esc)8\(esc)[2A")
    }

    @Test func hideResetsTheRegionAndPullsTheRowsUp() {
        #expect(PanelScreen.hide(height: 4) == "\(esc)7\(esc)[r\(esc)[1;1H\(esc)[4M\(esc)8\(esc)[4A")
        #expect(PanelScreen.hide(height: 0) == "")
    }

    @Test func restartScrollsTheScreenAway() {
        #expect(
            PanelScreen.restart(height: 2, rows: 3)
                == "\(esc)[r\(esc)[3;1H\(esc)D\(esc)D\(esc)D\(esc)[3;1H\(esc)7\(esc)[3;3r\(esc)8")
        #expect(
            PanelScreen.restart(height: 0, rows: 2)
                == "\(esc)[r\(esc)[2;1H\(esc)D\(esc)D\(esc)[1;1H\(esc)7\(esc)[r\(esc)8")
    }

    @Test func drawClearsEachRowUnlessItsTextFillsIt() {
        #expect(
            PanelScreen.draw([(1, "abc"), (3, "abcd")], width: 4)
                == "\(esc)7\(esc)[1;1Habc\(esc)[0m\(esc)[K\(esc)[3;1Habcd\(esc)[0m\(esc)8")
        #expect(PanelScreen.draw([], width: 4) == "")
    }
}

@Suite("Live panel: layout")
struct PanelLayoutTests {
    static func entry(_ name: String, rows count: Int, error: String? = nil) -> PanelEntry {
        PanelEntry(
            name: name, version: 3, detail: "external, coalesced 1", time: "12:00:00",
            result: LiveQueryResult(
                columns: ["n"], rows: (1...max(count, 1)).prefix(count).map { [.integer(Int64($0))] }),
            error: error)
    }

    let layout = PanelLayout(settings: RenderSettings(mode: .box), width: 50)

    @Test func aQueryThatFitsIsShownWhole() {
        #expect(
            layout.lines([Self.entry("top", rows: 2)], rows: 24) == [
                "-- top v3 (external, coalesced 1) 12:00:00", "┌───┐", "│ n │", "├───┤", "│ 1 │", "│ 2 │", "└───┘",
            ])
        #expect(layout.rule == String(repeating: "─", count: 50))
    }

    @Test func aQueryThatDoesNotFitShowsItsFirstRowsThenHowManyMore() {
        // 24 rows: the panel takes at most 12, its rule included.
        let lines = layout.lines([Self.entry("big", rows: 30)], rows: 24)
        #expect(lines.count == 11)
        #expect(lines.suffix(3) == ["│ 5 │", "└───┘", "… 25 more rows"])
    }

    @Test func queriesShareThePanelAndSmallOnesStayWhole() {
        // 44 rows: 21 lines for three queries that need 35, 6 and 7.
        let lines = layout.lines(
            [Self.entry("big", rows: 30), Self.entry("one", rows: 1), Self.entry("two", rows: 2)], rows: 44)
        #expect(lines.count == 21)
        #expect(
            lines == [
                "-- big v3 (external, coalesced 1) 12:00:00", "┌───┐", "│ n │", "├───┤", "│ 1 │", "│ 2 │", "└───┘",
                "… 28 more rows",
                "-- one v3 (external, coalesced 1) 12:00:00", "┌───┐", "│ n │", "├───┤", "│ 1 │", "└───┘",
                "-- two v3 (external, coalesced 1) 12:00:00", "┌───┐", "│ n │", "├───┤", "│ 1 │", "│ 2 │", "└───┘",
            ])
    }

    @Test func aBigResultShowsItsFirstRows() {
        let lines = layout.lines([Self.entry("big", rows: 10_000)], rows: 40)
        #expect(lines.count == 19)
        // The grid is as wide as the rows shown.
        #expect(lines.suffix(3) == ["│ 13 │", "└────┘", "… 9987 more rows"])
    }

    @Test("A result cut at the live queries' row cap counts every row, not the ones kept")
    func aTruncatedResultSaysHowManyRowsThereReallyAre() {
        var entry = Self.entry("big", rows: 10_000)
        entry.result.truncated = true
        entry.result.total = 100_000
        let lines = layout.lines([entry], rows: 40)
        #expect(lines.last == "… 99987 more rows")
    }

    @Test func aPanelTooShortForRowsCountsThem() {
        let lines = layout.content([Self.entry("a", rows: 9), Self.entry("b", rows: 0)], limit: 4)
        #expect(
            lines == [
                "-- a v3 (external, coalesced 1) 12:00:00", "… 9 rows", "-- b v3 (external, coalesced 1) 12:00:00",
                "(no rows)",
            ])
        let many = layout.content((1...5).map { Self.entry("q\($0)", rows: 1) }, limit: 3)
        #expect(many.count == 3)
        #expect(many.last == "… and 3 more live queries")
    }

    @Test func anErrorTakesTheQuerysSlot() {
        let lines = layout.lines([Self.entry("gone", rows: 2, error: "no such table: u")], rows: 24)
        #expect(lines == ["-- gone v3 (error) 12:00:00", "error: no such table: u"])
    }

    @Test func everyLineFitsTheWidth() {
        let narrow = PanelLayout(settings: RenderSettings(mode: .list, colour: true), width: 20)
        var entry = Self.entry("a_rather_long_live_query_name", rows: 1)
        entry.result = LiveQueryResult(columns: ["text"], rows: [[.text(String(repeating: "x", count: 50))]])
        for line in narrow.lines([entry], rows: 24) {
            #expect(TerminalText.width(line) <= 20, "\(line)")
        }
        #expect(TerminalText.clip("\(esc)[1mabcdef\(esc)[0m", toWidth: 4) == "\(esc)[1mabc…\(esc)[0m")
    }

    @Test func theSessionsModeIsUsed() {
        let list = PanelLayout(settings: RenderSettings(mode: .list), width: 40)
        #expect(list.lines([Self.entry("top", rows: 2)], rows: 24).dropFirst() == ["n", "1", "2"])
    }
}

@Suite("Live panel: what reaches the screen")
struct LivePanelTests {
    /// A value shared with the panel's closures.
    final class Shared<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
            lock.lock()
            defer { lock.unlock() }
            return body(&value)
        }
    }

    /// A panel drawing into a string, on a terminal of a size the test sets.
    final class Harness: Sendable {
        let written = Shared("")
        let size = Shared<Terminal.Size?>(Terminal.Size(rows: 24, columns: 40))
        let panel: LivePanel
        var watches: WatchTable { panel.watches }

        init(capable: Bool = true) {
            let written = written
            let size = size
            panel = LivePanel(
                capable: capable, watches: WatchTable(keepsPanelEntries: capable),
                output: { text in written.withLock { $0 += text } },
                terminalSize: { size.withLock { $0 } })
        }

        /// What was written since the last call.
        func take() -> String {
            written.withLock { text in
                defer { text = "" }
                return text
            }
        }

        func sync() -> [PanelEntry] { panel.sync(settings: RenderSettings(mode: .box)) }
    }

    static func snapshot(_ name: String, rows: [[SQLValue]]) -> LiveQuerySnapshot {
        LiveQuerySnapshot(
            name: name, version: 1, result: LiveQueryResult(columns: ["n"], rows: rows), tables: ["t"])
    }

    static func change(_ name: String, _ version: Int, rows: [[SQLValue]], previous: [[SQLValue]]) -> LiveQueryChange {
        LiveQueryChange(
            name: name, version: version, result: LiveQueryResult(columns: ["n"], rows: rows),
            previous: LiveQueryResult(columns: ["n"], rows: previous), cause: .external, coalesced: 1,
            elapsed: .milliseconds(1))
    }

    @Test func showRedrawInPlaceGrowHide() {
        let harness = Harness()
        let panel = harness.panel
        #expect(harness.sync().isEmpty)
        #expect(harness.take() == "", "no live query, no panel")

        panel.watches.didRegister(Self.snapshot("top", rows: [[.integer(1)]]), replaced: false)
        #expect(panel.needsLayoutChange(settings: RenderSettings(mode: .box)))
        _ = harness.sync()
        // header, 5 grid lines, rule: 7 rows.
        var output = harness.take()
        #expect(output.hasPrefix(PanelScreen.show(height: 7, rows: 24)))
        #expect(output.contains("\(esc)[7;1H" + String(repeating: "─", count: 40)))
        #expect(panel.readlineSize == Terminal.Size(rows: 17, columns: 40))
        _ = harness.sync()
        #expect(harness.take() == "", "nothing changed, nothing drawn")

        // A new value: only the rows that differ are drawn, nothing moves.
        _ = panel.watches.take(Self.change("top", 2, rows: [[.integer(2)]], previous: [[.integer(1)]]), shown: false)
        #expect(!panel.needsLayoutChange(settings: RenderSettings(mode: .box)))
        _ = harness.sync()
        output = harness.take()
        #expect(output.hasPrefix("\(esc)7\(esc)[1;1H-- top v2 (external, coalesced 1) "))
        #expect(output.contains("\(esc)[5;1H│ 2 │"))
        #expect(!output.contains("\(esc)[3;1H"), "the column's header did not change")
        #expect(!output.contains("r\(esc)8"), "the scroll region did not change")

        // More rows: the panel grows; fewer: it keeps its height.
        _ = panel.watches.take(
            Self.change("top", 3, rows: [[.integer(2)], [.integer(3)]], previous: [[.integer(2)]]), shown: false)
        _ = harness.sync()
        #expect(harness.take().hasPrefix(PanelScreen.grow(from: 7, to: 8, rows: 24)))
        _ = panel.watches.take(
            Self.change("top", 4, rows: [[.integer(2)]], previous: [[.integer(2)], [.integer(3)]]), shown: false)
        #expect(!panel.needsLayoutChange(settings: RenderSettings(mode: .box)))
        _ = harness.sync()
        #expect(!harness.take().contains("M"), "no rows deleted")

        // The last query goes: so does the panel.
        panel.watches.remove("top")
        #expect(harness.sync().isEmpty)
        #expect(harness.take() == PanelScreen.hide(height: 8))
        #expect(panel.readlineSize == Terminal.Size(rows: 24, columns: 40))
    }

    @Test func offTooSmallAndResized() {
        let harness = Harness()
        let panel = harness.panel
        panel.watches.didRegister(Self.snapshot("top", rows: [[.integer(1)]]), replaced: false)
        _ = harness.sync()
        _ = harness.take()

        // `.panel off`: the panel goes, and its queries are handed back to be printed once.
        panel.setEnabled(false)
        #expect(!panel.isDisplayable)
        #expect(harness.sync().map(\.name) == ["top"])
        #expect(harness.take() == PanelScreen.hide(height: 7))
        panel.setEnabled(true)
        _ = harness.sync()
        #expect(harness.take().hasPrefix(PanelScreen.show(height: 7, rows: 24)))

        // Resized: the screen starts over at the new size.
        harness.size.withLock { $0 = Terminal.Size(rows: 30, columns: 50) }
        #expect(panel.needsLayoutChange(settings: RenderSettings(mode: .box)))
        _ = harness.sync()
        let output = harness.take()
        #expect(output.hasPrefix(PanelScreen.restart(height: 7, rows: 30)))
        #expect(output.contains(String(repeating: "─", count: 50)))

        // Too small: no panel, the queries are printed once.
        harness.size.withLock { $0 = Terminal.Size(rows: 11, columns: 50) }
        #expect(!panel.isDisplayable)
        #expect(harness.sync().map(\.name) == ["top"])
        #expect(harness.take() == PanelScreen.restart(height: 0, rows: 11))
        #expect(panel.readlineSize == Terminal.Size(rows: 11, columns: 50))

        // Large enough again, then the session ends: the panel goes for good.
        harness.size.withLock { $0 = Terminal.Size(rows: 12, columns: 50) }
        _ = harness.sync()
        // Half of 12 rows: the header, `… 1 row` and the rule.
        #expect(harness.take().hasPrefix(PanelScreen.show(height: 3, rows: 12)))
        panel.release()
        #expect(harness.sync().isEmpty)
        #expect(harness.take() == PanelScreen.hide(height: 3))
        panel.watches.didRegister(Self.snapshot("late", rows: []), replaced: false)
        _ = harness.sync()
        #expect(harness.take() == "")
    }

    @Test func withoutATerminalNothingIsEverDrawn() {
        let harness = Harness(capable: false)
        harness.panel.watches.didRegister(Self.snapshot("top", rows: [[.integer(1)]]), replaced: false)
        #expect(!harness.panel.isDisplayable)
        #expect(harness.sync().isEmpty)
        #expect(harness.take() == "")
    }

    @Test func aVersionIsHighlightedAgainstTheOneLastDrawn() {
        var entry = PanelEntry(Self.snapshot("top", rows: [[.integer(1)]]), replaced: false, time: "12:00:00")
        entry.drawn = true
        entry.apply(Self.change("top", 2, rows: [[.integer(2)]], previous: [[.integer(1)]]), time: "12:00:01")
        entry.apply(Self.change("top", 3, rows: [[.integer(3)]], previous: [[.integer(2)]]), time: "12:00:02")
        #expect(entry.previous?.rows == [[.integer(1)]], "version 2 was never drawn")
        entry.drawn = true
        entry.apply(Self.change("top", 4, rows: [[.integer(4)]], previous: [[.integer(3)]]), time: "12:00:03")
        #expect(entry.previous?.rows == [[.integer(3)]])
        entry.apply(Self.change("top", 2, rows: [[.integer(9)]], previous: []), time: "12:00:04")
        #expect(entry.version == 4, "an older version is ignored")
        entry.fail("no such table: t", time: "12:00:05")
        #expect(entry.header == "-- top v4 (error) 12:00:05")
        entry.apply(Self.change("top", 5, rows: [[.integer(5)]], previous: [[.integer(4)]]), time: "12:00:06")
        #expect(entry.error == nil)
        #expect(entry.header == "-- top v5 (external, coalesced 1) 12:00:06")
    }
}

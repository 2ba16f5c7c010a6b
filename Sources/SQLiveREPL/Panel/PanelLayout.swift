import SQLiveEngine

/// What the panel draws: its entries' lines, fitted to the terminal.
///
/// A pure value: given the entries, the render settings and the room
/// available, it decides how many lines each live query gets and draws
/// them. The panel takes at most half of the terminal's rows, its last row
/// being a rule; when its queries need more, each gets a fair share (a
/// query that needs less than its share leaves the rest to the others),
/// and a query cut short shows its first rows, then `… N more rows`.
///
/// ```text
/// -- top v7 (external, coalesced 3) 14:02:11
/// ┌──────────────┬───────┐
/// │     name     │ score │
/// ├──────────────┼───────┤
/// │ Blob Jr      │   100 │
/// │ Grandma Blob │    90 │
/// └──────────────┴───────┘
/// … 7 more rows
/// ──────────────────────────────────────────
/// ```
struct PanelLayout {
    /// The smallest terminal that holds a panel; a smaller one re-prints
    /// above the prompt instead.
    static let minimumRows = 12
    static let minimumColumns = 20

    /// Whether a terminal of this size holds a panel.
    static func fits(_ size: Terminal.Size) -> Bool {
        size.rows >= minimumRows && size.columns >= minimumColumns
    }

    /// The most rows the panel may take, its rule included: half the terminal.
    static func maximumHeight(rows: Int) -> Int {
        rows / 2
    }

    let settings: RenderSettings
    let width: Int

    /// - parameter settings: the session's settings (mode, NULL text,
    ///   colour); grids are fitted to `width`.
    init(settings: RenderSettings, width: Int) {
        var settings = settings
        settings.headers = true
        settings.maxWidth = width
        // The panel is a terminal's: grids one line per row, cut to its width.
        settings.terminal = true
        self.settings = settings
        self.width = width
    }

    /// The panel's rows for a terminal of `rows` rows: its entries' lines
    /// (at most `maximumHeight - 1`), then the rule. Every line fits the width.
    func lines(_ entries: [PanelEntry], rows: Int) -> [String] {
        content(entries, limit: Self.maximumHeight(rows: rows) - 1)
    }

    /// The rule under the entries.
    var rule: String {
        let line = String(repeating: "─", count: width)
        return settings.colour ? ANSI.dim + line + ANSI.reset : line
    }

    /// The entries' lines, at most `limit`.
    func content(_ entries: [PanelEntry], limit: Int) -> [String] {
        guard limit > 0, !entries.isEmpty else { return [] }
        var shown = entries
        var overflow: String?
        if entries.count > limit {
            shown = Array(entries.prefix(limit - 1))
            overflow = "… and \(entries.count - shown.count) more live queries"
        }
        let available = limit - (overflow == nil ? 0 : 1)
        // Each query's rows, styled once (highlighting compares every row).
        let printer = LiveQueryPrinter(settings: settings)
        let rows = shown.map { printer.styledRows($0.result, previous: $0.previous) }
        func lines(_ index: Int, _ budget: Int) -> (lines: [String], complete: Bool) {
            fit(shown[index], rows: rows[index], budget: budget)
        }
        // What each needs (more than all there is, for one that cannot be shown whole).
        let naturals = shown.indices.map { index in
            let fitted = lines(index, available)
            return fitted.complete ? fitted.lines.count : available + 1
        }
        var budgets = naturals
        if naturals.reduce(0, +) > available {
            budgets = Self.share(available, among: naturals)
            // A share too small for a query's rows leaves lines unused
            // (it shows `… N rows`): they complete the query nearest to
            // complete, or else go to the first that can use them.
            for _ in 0...shown.count {
                let used = budgets.indices.map { lines($0, budgets[$0]).lines.count }
                let leftover = available - used.reduce(0, +)
                budgets = used
                let cut = budgets.indices.filter { used[$0] < naturals[$0] }
                guard leftover > 0, !cut.isEmpty else { break }
                let completable = cut.filter { naturals[$0] - used[$0] <= leftover }
                if let nearest = completable.min(by: { naturals[$0] - used[$0] < naturals[$1] - used[$1] }) {
                    budgets[nearest] = naturals[nearest]
                    continue
                }
                if let first = cut.first(where: { lines($0, used[$0] + leftover).lines.count > used[$0] }) {
                    budgets[first] += leftover
                }
                break
            }
        }
        var result: [String] = []
        for index in shown.indices { result += lines(index, budgets[index]).lines }
        if let overflow { result.append(overflow) }
        return result.map { TerminalText.clip($0, toWidth: width) }
    }

    /// Shares `total` lines among queries that need `needs` lines each:
    /// everyone gets a line (the header), then one more at a time, in
    /// turn, to those that need more.
    static func share(_ total: Int, among needs: [Int]) -> [Int] {
        var budgets = needs.map { min($0, 1) }
        var remaining = total - budgets.reduce(0, +)
        while remaining > 0 {
            var gave = false
            for index in budgets.indices where remaining > 0 && budgets[index] < needs[index] {
                budgets[index] += 1
                remaining -= 1
                gave = true
            }
            if !gave { break }
        }
        return budgets
    }

    /// One query's lines, at most `budget` (at least its header).
    func lines(of entry: PanelEntry, budget: Int) -> [String] {
        let rows = LiveQueryPrinter(settings: settings).styledRows(entry.result, previous: entry.previous)
        return fit(entry, rows: rows, budget: budget).lines
    }

    /// One query's lines, at most `budget`, and whether all its rows are
    /// there. Only as many rows as could fit are ever drawn: a result of
    /// ten thousand rows costs no more than one of fifty.
    private func fit(_ entry: PanelEntry, rows: [StyledRow], budget: Int) -> (lines: [String], complete: Bool) {
        let printer = LiveQueryPrinter(settings: settings)
        let header = printer.colour(ANSI.bold + ANSI.cyan, entry.header)
        guard budget > 1 else { return ([header], false) }
        if let error = entry.error {
            return ([header, printer.colour(ANSI.red, "error: " + error)], true)
        }
        let result = entry.result
        // Every row takes a line at least: more rows than lines cannot fit.
        if rows.count < budget {
            let cap = result.truncated ? ["-- (the first \(result.rows.count) of \(result.total) rows)"] : []
            let full = body(result.columns, rows) + cap
            if full.count <= budget - 1 { return ([header] + full, true) }
        }

        // The most rows that fit with the `… N more rows` line under them.
        let room = budget - 2
        var low = 0
        var high = min(rows.count - 1, room)
        while low < high {
            let middle = (low + high + 1) / 2
            if body(result.columns, Array(rows.prefix(middle))).count <= room {
                low = middle
            } else {
                high = middle - 1
            }
        }
        let shownRows = rows.prefix(low).filter { $0.style != .removed }.count
        let more = result.total - shownRows
        let moreLine = printer.colour(ANSI.dim, more == 1 ? "… 1 more row" : "… \(more) more rows")
        guard low > 0 else {
            let count =
                switch result.total {
                case 0: "(no rows)"
                case 1: "… 1 row"
                case let count: "… \(count) rows"
                }
            return ([header, printer.colour(ANSI.dim, count)], false)
        }
        return ([header] + body(result.columns, Array(rows.prefix(low))) + [moreLine], false)
    }

    /// The rows drawn in the session's mode, one string per line.
    private func body(_ columns: [String], _ rows: [StyledRow]) -> [String] {
        let text = render(columns: columns, styledRows: rows, settings: settings)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

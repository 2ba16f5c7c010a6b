import SQLiveEngine

/// Formats live queries' results: the first print of `.watch` and each
/// re-print after a change.
///
/// Every print starts with a header line that names the query and its
/// version, then shows the rows in the current mode:
///
/// ```text
/// -- leaders v3 (external, coalesced 2)
/// ┌──────┬───────┐
/// ...
/// ```
///
/// With `.watch --diff`, a re-print shows only the rows removed and added,
/// in a first column `change` holding `-` or `+`; with `.watch --changes`,
/// what the engine's `RowChanges` says changed, `~` marking a changed row,
/// and a column `row` with its row number (1-based) in the new result (the
/// old one for a removed row). With colour, a re-print
/// shows what changed since the version before: changed cells in reverse
/// video, added rows green, removed rows once, red and struck through.
public struct LiveQueryPrinter: Sendable {
    public var settings: RenderSettings

    public init(settings: RenderSettings) {
        self.settings = settings
    }

    /// The first print, when a query is registered or redefined.
    public func registered(_ snapshot: LiveQuerySnapshot, replaced: Bool = false) -> String {
        header(Self.registeredHeader(snapshot, replaced: replaced)) + rows(snapshot.result)
    }

    /// The first print's header: `-- NAME vVERSION (watching, reads TABLES)`.
    static func registeredHeader(_ snapshot: LiveQuerySnapshot, replaced: Bool) -> String {
        "-- \(snapshot.name) v\(snapshot.version) (\(registeredDetail(snapshot, replaced: replaced)))"
    }

    /// `watching, reads TABLES` (or `redefined, ...`).
    static func registeredDetail(_ snapshot: LiveQuerySnapshot, replaced: Bool) -> String {
        let tables = snapshot.tables.isEmpty ? "no tables" : "reads " + snapshot.tables.joined(separator: ", ")
        return (replaced ? "redefined" : "watching") + ", " + tables
    }

    /// A re-print after a change.
    public func changed(_ change: LiveQueryChange) -> String {
        if change.delivery == .changesOnly, let changes = change.changes {
            return header(
                Self.changeHeader(
                    name: change.name, version: change.version, cause: change.cause, coalesced: change.coalesced))
                + self.changes(changes, result: change.result, previous: change.previous)
        }
        return changed(
            name: change.name, version: change.version, cause: change.cause, coalesced: change.coalesced,
            result: change.result, previous: change.previous, diff: change.delivery == .rowsAndDiff)
    }

    /// `--changes`: the rows removed, changed and added, in the order of
    /// their row numbers, and the count when the result is truncated.
    func changes(_ changes: RowChanges, result: LiveQueryResult, previous: LiveQueryResult) -> String {
        var entries: [(order: Int, row: StyledRow)] = []
        for removed in changes.removed {
            entries.append(
                (
                    removed.from,
                    StyledRow([.text("-"), .integer(Int64(removed.from + 1))] + removed.row, style: .removed)
                ))
        }
        for changed in changes.changed {
            let old = previous.rows[changed.from]
            let columns = Set(
                changed.row.indices.filter { $0 >= old.count || old[$0] != changed.row[$0] }.map { $0 + 2 })
            entries.append(
                (
                    changed.at,
                    StyledRow(
                        [.text("~"), .integer(Int64(changed.at + 1))] + changed.row, style: .changed(columns: columns))
                ))
        }
        for added in changes.added {
            entries.append(
                (added.at, StyledRow([.text("+"), .integer(Int64(added.at + 1))] + added.row, style: .added)))
        }
        var copy = settings
        copy.headers = true
        var output = render(
            columns: ["change", "row"] + result.columns,
            styledRows: entries.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
                .map(\.element.row), settings: copy)
        if result.truncated {
            output += "-- (the first \(result.rows.count) of \(result.total) rows)\n"
        }
        return output
    }

    /// A re-print after a change: all rows, or with `diff` only the rows
    /// removed and added since `previous`. With colour, what changed is
    /// highlighted (see `styledRows`); `--diff`'s `-` rows are red and
    /// struck, its `+` rows green.
    func changed(
        name: String, version: Int, cause: ChangeCause, coalesced: Int, result: LiveQueryResult,
        previous: LiveQueryResult, diff: Bool
    ) -> String {
        var output = header(Self.changeHeader(name: name, version: version, cause: cause, coalesced: coalesced))
        if diff {
            let rowDiff = RowDiff(from: previous.rows, to: result.rows)
            let rows =
                rowDiff.removed.map { StyledRow([.text("-")] + $0, style: .removed) }
                + rowDiff.added.map { StyledRow([.text("+")] + $0, style: .added) }
            var copy = settings
            copy.headers = true
            output += render(columns: ["change"] + result.columns, styledRows: rows, settings: copy)
        } else {
            output += rows(result, previous: previous)
        }
        return output
    }

    /// A re-print's header: `-- NAME vVERSION (CAUSE, coalesced N)`.
    static func changeHeader(name: String, version: Int, cause: ChangeCause, coalesced: Int) -> String {
        "-- \(name) v\(version) (\(cause.rawValue), coalesced \(coalesced))"
    }

    /// The rows to draw for a new version: with colour, in a mode that
    /// highlights (not csv or json), styled against the version before it
    /// (cells that changed, rows added, rows removed shown once); otherwise
    /// the rows as they are.
    func styledRows(_ result: LiveQueryResult, previous: LiveQueryResult?) -> [StyledRow] {
        guard settings.colour, settings.mode.highlightsChanges, let previous else {
            return result.rows.map { StyledRow($0) }
        }
        return ResultChanges.rows(previous: previous, result: result)
    }

    /// A live query's failure, for standard error.
    public func failed(name: String, error: SQLiveError) -> String {
        colour(ANSI.red, "-- \(name): error: \(error.description)") + "\n"
    }

    private func rows(_ result: LiveQueryResult, previous: LiveQueryResult? = nil) -> String {
        var copy = settings
        // A re-print without column names is hard to read.
        copy.headers = true
        var output = render(
            columns: result.columns, styledRows: styledRows(result, previous: previous), settings: copy)
        if result.truncated {
            output += "-- (the first \(result.rows.count) of \(result.total) rows)\n"
        }
        return output
    }

    func header(_ text: String) -> String {
        colour(ANSI.bold + ANSI.cyan, text) + "\n"
    }

    func colour(_ code: String, _ text: String) -> String {
        settings.colour ? code + text + ANSI.reset : text
    }
}

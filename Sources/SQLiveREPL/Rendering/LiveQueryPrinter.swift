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
/// in a first column `change` holding `-` or `+`.
public struct LiveQueryPrinter: Sendable {
    public var settings: RenderSettings

    public init(settings: RenderSettings) {
        self.settings = settings
    }

    /// The first print, when a query is registered or redefined.
    public func registered(_ snapshot: LiveQuerySnapshot, replaced: Bool = false) -> String {
        let tables = snapshot.tables.isEmpty ? "no tables" : "reads " + snapshot.tables.joined(separator: ", ")
        let verb = replaced ? "redefined" : "watching"
        var output = header("-- \(snapshot.name) v\(snapshot.version) (\(verb), \(tables))")
        output += rows(snapshot.result)
        return output
    }

    /// A re-print after a change.
    public func changed(_ change: LiveQueryChange, diff: Bool) -> String {
        changed(
            name: change.name, version: change.version, cause: change.cause, coalesced: change.coalesced,
            result: change.result, rowDiff: diff ? change.diff : nil)
    }

    /// A re-print after a change: all rows, or only those of `rowDiff`.
    func changed(
        name: String, version: Int, cause: ChangeCause, coalesced: Int, result: LiveQueryResult, rowDiff: RowDiff?
    ) -> String {
        var output = header("-- \(name) v\(version) (\(cause.rawValue), coalesced \(coalesced))")
        if let rowDiff {
            let rows =
                rowDiff.removed.map { [SQLValue.text("-")] + $0 } + rowDiff.added.map { [SQLValue.text("+")] + $0 }
            var copy = settings
            copy.headers = true
            output += render(columns: ["change"] + result.columns, rows: rows, settings: copy)
        } else {
            output += rows(result)
        }
        return output
    }

    /// A live query's failure, for standard error.
    public func failed(name: String, error: SQLiveError) -> String {
        colour(ANSI.red, "-- \(name): error: \(error.description)") + "\n"
    }

    private func rows(_ result: LiveQueryResult) -> String {
        var copy = settings
        // A re-print without column names is hard to read.
        copy.headers = true
        var output = render(columns: result.columns, rows: result.rows, settings: copy)
        if result.truncated {
            output += "-- (truncated to \(result.rows.count) rows)\n"
        }
        return output
    }

    private func header(_ text: String) -> String {
        colour(ANSI.bold + ANSI.cyan, text) + "\n"
    }

    private func colour(_ code: String, _ text: String) -> String {
        settings.colour ? code + text + ANSI.reset : text
    }
}

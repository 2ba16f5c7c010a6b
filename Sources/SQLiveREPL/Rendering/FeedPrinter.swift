import SQLiveEngine

/// `.feed`'s lines: one commit's changed rows, readable.
///
/// ```text
/// -- commit 7 (external)
/// ~ players rowid=3: score 60 → 61
/// + players rowid=9: id=9, name='Zed', score=0
/// - players rowid=2: id=2, name='Blob Jr', score=100
/// ? games: rows unknown (the old version of page 4 is out of reach)
/// ```
struct FeedPrinter {
    /// The most characters of a value shown; longer ones are cut with `…`.
    static let valueWidth = 60

    static func text(_ commit: CommitRows) -> String {
        var text = "-- commit \(commit.commit) (\(commit.cause.rawValue))\n"
        for change in commit.changes {
            let key = change.key.map { keyText($0, names: change.keyNames) } ?? ""
            switch change.operation {
            case .insert:
                text += "+ \(change.table) \(key): \(row(change.new ?? [], columns: change.columns))\n"
            case .delete:
                text += "- \(change.table) \(key): \(row(change.old ?? [], columns: change.columns))\n"
            case .update:
                let old = change.old ?? []
                let new = change.new ?? []
                let changed = change.columns.indices.filter { $0 < old.count && $0 < new.count && old[$0] != new[$0] }
                let parts = changed.map { "\(change.columns[$0]) \(literal(old[$0])) → \(literal(new[$0]))" }
                text += "~ \(change.table) \(key): \(parts.joined(separator: ", "))\n"
            case .unknown:
                text += "? \(change.table): rows unknown (\(change.reason ?? "no reason given"))\n"
            }
        }
        return text
    }

    private static func keyText(_ key: RowKey, names: [String]) -> String {
        switch key {
        case .rowid(let rowid): "rowid=\(rowid)"
        case .primaryKey(let values): zip(names, values).map { "\($0)=\(literal($1))" }.joined(separator: ",")
        }
    }

    private static func row(_ values: [SQLValue], columns: [String]) -> String {
        zip(columns, values).map { "\($0)=\(literal($1))" }.joined(separator: ", ")
    }

    private static func quoted(_ text: String) -> String {
        var output = OutputBuffer(capacity: text.utf8.count + 2)
        SQLiteText.appendQuoted(text, to: &output)
        return String(decoding: output.bytes, as: UTF8.self)
    }

    /// A value as SQL writes it, cut to `valueWidth` characters.
    static func literal(_ value: SQLValue) -> String {
        let text: String =
            switch value {
            case .null: "NULL"
            case .integer(let integer): String(integer)
            case .real(let real): SQLValue.format(real: real)
            case .text(let text): quoted(text)
            case .blob(let data):
                data.count > valueWidth / 2
                    ? "X'\(data.prefix(8).map { String(format: "%02X", $0) }.joined())…' (\(data.count) bytes)"
                    : "X'\(data.map { String(format: "%02X", $0) }.joined())'"
            }
        guard text.count > valueWidth else { return text }
        return String(text.prefix(valueWidth - 1)) + "…"
    }
}

import SQLiveEngine

/// How one row of a live query's re-print is drawn, compared with the
/// version before it.
public enum RowStyle: Hashable, Sendable {
    /// The row was there before, unchanged.
    case plain
    /// A row that is new in this version.
    case added
    /// A row of the previous version that is gone: shown once, in this version only.
    case removed
    /// A row that was there before with other values in these columns.
    case changed(columns: Set<Int>)
}

extension RowStyle {
    /// How the cell of `column` is drawn.
    func cell(_ column: Int) -> CellStyle {
        switch self {
        case .plain: .plain
        case .added: .added
        case .removed: .removed
        case .changed(let columns): columns.contains(column) ? .changed : .plain
        }
    }
}

/// How one cell is drawn: its row's style, or `changed` for a changed value.
enum CellStyle: UInt8, Sendable {
    case plain, changed, added, removed

    /// The escape sequence that starts a cell drawn in this style (nothing
    /// for a plain value); a NULL is dimmed besides. Colour only.
    func prefix(isNull: Bool) -> String {
        let style =
            switch self {
            case .plain: ""
            case .changed: ANSI.changed
            case .added: ANSI.added
            case .removed: ANSI.removed
            }
        return isNull ? style + ANSI.dim : style
    }
}

/// A row to draw, with its style.
public struct StyledRow: Hashable, Sendable {
    public var values: [SQLValue]
    public var style: RowStyle

    public init(_ values: [SQLValue], style: RowStyle = .plain) {
        self.values = values
        self.style = style
    }
}

/// What changed between two versions of a live query's result, row by row:
/// the rows of the new version, each plain, added or with its changed
/// columns, and the rows removed, each where it was.
///
/// Rows have no identity of their own, so they are matched the way a
/// reader would: first the rows that did not change at all (as multisets,
/// like `RowDiff`); then each remaining new row is paired with the
/// remaining old row that has the same first column (usually a key or a
/// name), or else that shares more than half of its values, preferring the
/// one that shares most values and then the nearest. A paired row is
/// *changed* in the columns that differ; a new row left unpaired is
/// *added*, an old one *removed*. The work is linear in the rows, but for
/// the search by shared values, done only when few rows are left to pair.
///
/// ```swift
/// let rows = ResultChanges.rows(
///     previous: LiveQueryResult(columns: ["name", "score"], rows: [[.text("Blob"), .integer(20)]]),
///     result: LiveQueryResult(columns: ["name", "score"], rows: [[.text("Blob"), .integer(30)]]))
/// // [StyledRow([.text("Blob"), .integer(30)], style: .changed(columns: [1]))]
/// ```
public enum ResultChanges {
    /// The rows to draw for `result`, styled against `previous`; removed
    /// rows are inserted where they were in `previous`. Without a previous
    /// result, or when the columns differ, every row is plain.
    public static func rows(previous: LiveQueryResult?, result: LiveQueryResult) -> [StyledRow] {
        guard let previous, previous.columns == result.columns else {
            return result.rows.map { StyledRow($0) }
        }
        // Built once (the rows are kept compactly and built when read).
        let old = Array(previous.rows)
        let new = Array(result.rows)
        // Unchanged rows, as multisets: each old row is used once.
        var unusedOld: [[SQLValue]: [Int]] = [:]
        for (index, row) in old.enumerated() { unusedOld[row, default: []].append(index) }
        var oldTaken = [Bool](repeating: false, count: old.count)
        var styles = [RowStyle?](repeating: nil, count: new.count)
        for (index, row) in new.enumerated() {
            if var indices = unusedOld[row], !indices.isEmpty {
                oldTaken[indices.removeFirst()] = true
                unusedOld[row] = indices
                styles[index] = .plain
            }
        }
        // Pair the rest: first the old rows with the same first column
        // (found by hashing), else, when few rows are left (the search
        // compares every pair), those that share more than half their values.
        let columnCount = result.columns.count
        var oldByKey: [SQLValue: [Int]] = [:]
        var leftOld: [Int] = []
        for (index, row) in old.enumerated() where !oldTaken[index] {
            leftOld.append(index)
            if let key = row.first { oldByKey[key, default: []].append(index) }
        }
        let leftNew = styles.indices.filter { styles[$0] == nil }
        let searchAll = leftOld.count * leftNew.count <= 40_000
        func shared(_ a: [SQLValue], _ b: [SQLValue]) -> Int {
            zip(a, b).reduce(0) { $0 + ($1.0 == $1.1 ? 1 : 0) }
        }
        for index in leftNew {
            let row = new[index]
            var best: (old: Int, score: (Int, Int, Int))?
            func consider(_ oldIndex: Int, sameKey: Bool) {
                guard !oldTaken[oldIndex] else { return }
                let count = shared(row, old[oldIndex])
                guard sameKey || count * 2 > columnCount else { return }
                let score = (sameKey ? 1 : 0, count, -abs(oldIndex - index))
                if best == nil || score > best!.score { best = (oldIndex, score) }
            }
            for oldIndex in row.first.flatMap({ oldByKey[$0] }) ?? [] { consider(oldIndex, sameKey: true) }
            if best == nil && searchAll {
                for oldIndex in leftOld { consider(oldIndex, sameKey: false) }
            }
            if let best {
                oldTaken[best.old] = true
                let candidate = old[best.old]
                let changed = Set((0..<row.count).filter { $0 >= candidate.count || row[$0] != candidate[$0] })
                styles[index] = .changed(columns: changed)
            } else {
                styles[index] = .added
            }
        }
        // Removed rows where they were: each at its old index (or at the end).
        let removed = old.indices.filter { !oldTaken[$0] }
        var rows: [StyledRow] = []
        rows.reserveCapacity(new.count + removed.count)
        var nextNew = 0
        var nextRemoved = 0
        while nextNew < new.count || nextRemoved < removed.count {
            if nextRemoved < removed.count && (removed[nextRemoved] <= rows.count || nextNew == new.count) {
                rows.append(StyledRow(old[removed[nextRemoved]], style: .removed))
                nextRemoved += 1
            } else {
                rows.append(StyledRow(new[nextNew], style: styles[nextNew] ?? .plain))
                nextNew += 1
            }
        }
        return rows
    }
}

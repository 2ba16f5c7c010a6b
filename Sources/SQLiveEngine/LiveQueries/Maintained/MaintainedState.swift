import Foundation

/// A live query's result kept from the rows each commit changed
/// (`RowChange`), instead of run again: what `MaintainedPlan` allows, from
/// a whole read at a known position (`MaintainedBase`), then commit by
/// commit. Every expression is evaluated by SQLite (`RowEvaluator`).
///
/// Whatever it cannot keep exactly makes it say `resync` — the caller then
/// runs the query again and reads a new base — never a guess:
/// - rows: a row leaving a window whose rows past it are not held (the
///   query keeps `visible` rows and as many again);
/// - groups: a removed minimum or maximum, a sum or average over values
///   that are not all integers (or whose sum may leave a double's exact
///   range), a REAL group key (GROUP BY equates 1 and 1.0);
/// - the rows of a commit unknown, more than `rowLimit` changed rows.
///
/// Not thread-safe: confined to the scheduler's actor.
final class MaintainedState {
    let plan: MaintainedPlan
    /// The position of the last commit applied (or of the base).
    private(set) var position: FilePosition
    let columns: [String]
    private let rowCap: Int
    private let evaluator: RowEvaluator
    private var kind: Kind

    /// The most changed rows of one table a commit may have for them to be
    /// applied; past that, running the query again costs about as much.
    static let rowLimit = 20_000

    enum Outcome: Equatable {
        case result(LiveQueryResult)
        case resync(String)
        /// The state goes on, but the order of its rows is SQLite's to
        /// say (groups that tie under ORDER BY): run the query this time.
        case rerun
    }

    private enum Kind {
        case rows(Window)
        case groups(Groups)
    }

    struct Window {
        /// The first rows in the query's order, each entry its rowid, its
        /// sort key's values, then its output row (`entryColumns`),
        /// encoded; the results delivered share its chunks.
        var entries: RowStore
        /// Every row the query has (before LIMIT).
        var matching: Int
        /// Whether `entries` holds every matching row.
        var complete: Bool
        var keep: Int
        /// The kept rows' rowids while the window does not hold every
        /// matching row (at most `keep`): a changed row is looked for by
        /// its old sort key only if it is kept, and one kept must be found.
        var kept: Set<Int64>?
    }

    struct Groups {
        var groups: [[KeyPart]: Group] = [:]
    }

    /// A group key's part, compared as SQLite's BINARY collation does (text by its bytes).
    enum KeyPart: Hashable {
        case null, integer(Int64), text([UInt8]), blob(Data)

        init?(_ value: SQLValue) {
            switch value {
            case .null: self = .null
            case .integer(let value): self = .integer(value)
            case .real: return nil
            case .text(let text): self = .text(Array(text.utf8))
            case .blob(let data): self = .blob(data)
            }
        }
    }

    struct Group {
        var key: [SQLValue]
        var count: Int64
        var arguments: [Argument]
        /// SQLite's own row for the group, for one whose values Swift cannot sum exactly.
        var row: [SQLValue]
        var opaque: Bool
    }

    struct Argument {
        var count: Int64
        var sum: Int64
        var min: SQLValue
        var max: SQLValue
        /// Holds a value that is not an INTEGER or NULL.
        var inexact: Bool
    }

    init(plan: MaintainedPlan, base: MaintainedBase, rowCap: Int) throws(RowEvaluator.Failure) {
        self.plan = plan
        self.position = base.position
        self.columns = base.resultColumns
        self.rowCap = rowCap
        evaluator = try RowEvaluator(ddl: base.ddl, table: plan.table, query: Self.evaluationSQL(plan))
        switch plan.kind {
        case .rows:
            guard let entries = base.entries else { throw RowEvaluator.Failure(message: "the base read no rows") }
            let complete = entries.count >= base.matching
            kind = .rows(
                Window(
                    entries: entries, matching: base.matching, complete: complete, keep: Self.keep(plan, rowCap),
                    kept: complete ? nil : Set(entries.firstIntegers())))
        case .groups:
            var groups = Groups()
            for row in base.rows {
                guard let group = Self.group(row, plan) else {
                    throw RowEvaluator.Failure(message: "a group key is REAL")
                }
                groups.groups[group.key.map { KeyPart($0)! }] = group
            }
            kind = .groups(groups)
        }
    }

    /// How many of the first rows a rows plan holds: what it shows, and as
    /// many again (at least 64), so that rows leaving it are replaced
    /// without reading.
    static func keep(_ plan: MaintainedPlan, _ rowCap: Int) -> Int {
        let shown = min(plan.limit ?? Int.max, rowCap)
        return shown + max(shown, 64)
    }

    // MARK: - SQL

    /// The expressions to evaluate for the sort key that are not output columns.
    private static func extraSort(_ plan: MaintainedPlan) -> [String] {
        plan.order.filter { $0.output == nil }.map(\.expression)
    }

    private static func whereClause(_ plan: MaintainedPlan) -> String {
        plan.filter.map { " WHERE (\($0))" } ?? ""
    }

    /// rows: `rowid, extra sort expressions, outputs`; groups: keys, count,
    /// each argument's count, sum, min, max, inexact, then the outputs.
    static func selectList(_ plan: MaintainedPlan) -> String {
        switch plan.kind {
        case .rows:
            return (["rowid"] + extraSort(plan).map { "(\($0))" } + plan.outputs.map { "(\($0))" })
                .joined(separator: ", ")
        case .groups:
            var list = plan.keys.map { "(\($0))" } + ["count(*)"]
            for argument in plan.arguments {
                let a = "(\(argument))"
                list += [
                    "count(\(a))", "sum(CASE WHEN typeof(\(a)) = 'integer' THEN \(a) END)", "min(\(a))", "max(\(a))",
                    "max(typeof(\(a)) NOT IN ('integer', 'null'))",
                ]
            }
            return (list + plan.outputs.map { "(\($0))" }).joined(separator: ", ")
        }
    }

    /// What the evaluator runs over changed rows.
    static func evaluationSQL(_ plan: MaintainedPlan) -> String {
        var sql = "SELECT \(selectList(plan)) FROM \(plan.from)\(whereClause(plan))"
        if plan.kind == .groups, !plan.keys.isEmpty {
            sql += " GROUP BY " + plan.keys.map { "(\($0))" }.joined(separator: ", ")
        }
        return sql
    }

    /// What the base read runs over the database.
    static func baseSQL(_ plan: MaintainedPlan, rowCap: Int) -> String {
        var sql = evaluationSQL(plan)
        if plan.kind == .rows {
            let terms = plan.order.map {
                "(\($0.expression)) \($0.descending ? "DESC" : "ASC") NULLS \($0.nullsFirst ? "FIRST" : "LAST")"
            }
            sql += " ORDER BY " + (terms + ["rowid"]).joined(separator: ", ") + " LIMIT \(keep(plan, rowCap))"
        }
        return sql
    }

    static func countSQL(_ plan: MaintainedPlan) -> String {
        "SELECT count(*) FROM \(plan.from)\(whereClause(plan))"
    }

    // MARK: - Rows

    /// Where an entry's values are in a row of `selectList` (rowid, extra
    /// sort expressions, outputs): the rowid, each sort term's value, then
    /// the outputs.
    static func entryColumns(_ plan: MaintainedPlan) -> [Int] {
        let extras = plan.order.filter { $0.output == nil }.count
        var columns = [0]
        var extra = 1
        for term in plan.order {
            if let output = term.output {
                columns.append(1 + extras + output)
            } else {
                columns.append(extra)
                extra += 1
            }
        }
        return columns + (0..<plan.outputs.count).map { 1 + extras + $0 }
    }

    /// A row of `selectList`'s rowid and sort key.
    private static func key(_ row: [SQLValue], _ layout: [Int], sortCount: Int) -> (rowid: Int64, sort: [SQLValue])? {
        guard case .integer(let rowid) = row[0] else { return nil }
        return (rowid, layout[1..<(1 + sortCount)].map { row[$0] })
    }

    /// Where an entry goes: before the first entry that sorts after it.
    private func index(of sort: [SQLValue], rowid: Int64, in entries: RowStore) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let precedes: Bool
            if plan.order.isEmpty {
                precedes = (entries.firstInteger(at: middle) ?? .min) < rowid
            } else {
                let key = entries.leadingValues(at: middle)
                guard case .integer(let middleRowid) = key[0] else { return middle }
                precedes = self.precedes(Array(key[1...]), middleRowid, sort, rowid)
            }
            if precedes {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low
    }

    private func precedes(_ a: [SQLValue], _ aRowid: Int64, _ b: [SQLValue], _ bRowid: Int64) -> Bool {
        let order = SQLOrdering.compare(a, b, plan.order)
        return order != 0 ? order < 0 : aRowid < bRowid
    }

    // MARK: - Groups

    private static func group(_ row: [SQLValue], _ plan: MaintainedPlan) -> Group? {
        let keyCount = plan.keys.count
        let key = Array(row[0..<keyCount])
        guard key.allSatisfy({ KeyPart($0) != nil }) else { return nil }
        guard case .integer(let count) = row[keyCount] else { return nil }
        var arguments: [Argument] = []
        var at = keyCount + 1
        var opaque = false
        for _ in plan.arguments {
            let argumentCount: Int64 = if case .integer(let value) = row[at] { value } else { 0 }
            let sum: Int64 = if case .integer(let value) = row[at + 1] { value } else { 0 }
            // Only a sum needs integers: min, max and count take any value.
            let summed = plan.summed.contains(arguments.count)
            let inexact = summed && row[at + 4] == .integer(1)
            arguments.append(
                Argument(count: argumentCount, sum: sum, min: row[at + 2], max: row[at + 3], inexact: inexact))
            if inexact || (summed && !Self.exact(arguments.last!, count: argumentCount)) { opaque = true }
            at += 5
        }
        return Group(key: key, count: count, arguments: arguments, row: Array(row[at...]), opaque: opaque)
    }

    /// Whether every partial sum of the argument's integers is a double
    /// exactly (SQLite 3.40 sums them as doubles too for `total` and `avg`).
    private static func exact(_ argument: Argument, count: Int64) -> Bool {
        func magnitude(_ value: SQLValue) -> Double {
            if case .integer(let value) = value { return abs(Double(value)) }
            return 0
        }
        return max(magnitude(argument.min), magnitude(argument.max)) * Double(count) < 9.0e15
    }

    private func row(of group: Group) -> [SQLValue] {
        if group.opaque { return group.row }
        return plan.columns.map { column in
            switch column {
            case .key(let index): return group.key[index]
            case .aggregate(.countAll, _): return .integer(group.count)
            case .aggregate(let function, let argument?):
                let a = group.arguments[argument]
                switch function {
                case .count: return .integer(a.count)
                case .sum: return a.count == 0 ? .null : .integer(a.sum)
                case .total: return .real(Double(a.sum))
                case .avg: return a.count == 0 ? .null : .real(Double(a.sum) / Double(a.count))
                case .min: return a.count == 0 ? .null : a.min
                case .max: return a.count == 0 ? .null : a.max
                case .countAll: return .integer(group.count)
                }
            case .aggregate(_, nil): return .null
            }
        }
    }

    // MARK: - Applying a commit

    /// Applies one commit's changes of the plan's table, at `position`.
    func apply(_ changes: [RowChange], at position: FilePosition) -> Outcome? {
        defer { self.position = position }
        guard !changes.isEmpty else { return nil }
        if let unknown = changes.first(where: { $0.operation == .unknown }) {
            return .resync("its table's rows are unknown for a commit: \(unknown.reason ?? "")")
        }
        guard changes.count <= Self.rowLimit else { return .resync("\(changes.count) rows changed in one commit") }
        var old: [(rowid: Int64, values: [SQLValue])] = []
        var new: [(rowid: Int64, values: [SQLValue])] = []
        for change in changes {
            guard case .rowid(let rowid) = change.key else { return .resync("a row without a rowid") }
            if let values = change.old { old.append((rowid, values)) }
            if let values = change.new { new.append((rowid, values)) }
        }
        let columns = changes[0].columns
        guard changes.allSatisfy({ $0.columns == columns }) else { return .resync("the table's columns changed") }
        do throws(RowEvaluator.Failure) {
            let before = try evaluator.evaluate(old, columns: columns)
            let after = try evaluator.evaluate(new, columns: columns)
            switch kind {
            case .rows(var window):
                kind = .groups(Groups())  // (released while it changes: no copy)
                defer { kind = .rows(window) }
                return applyRows(&window, before: before, after: after)
            case .groups(var groups):
                kind = .rows(Window(entries: RowStore(leading: 0), matching: 0, complete: true, keep: 0, kept: nil))
                defer { kind = .groups(groups) }
                return applyGroups(&groups, before: before, after: after)
            }
        } catch {
            return .resync("SQLite could not evaluate the changed rows: \(error.message)")
        }
    }

    /// A changed row leaves the kept rows by its old values (evaluated,
    /// they give its old sort key; a row whose old values did not match
    /// was not kept) and comes back by its new ones.
    private func applyRows(_ window: inout Window, before: [[SQLValue]], after: [[SQLValue]]) -> Outcome {
        let layout = Self.entryColumns(plan)
        for row in before {
            guard let (rowid, sort) = Self.key(row, layout, sortCount: plan.order.count) else {
                return .resync("a row without a rowid")
            }
            if let kept = window.kept, !kept.contains(rowid) { continue }
            let at = index(of: sort, rowid: rowid, in: window.entries)
            // A kept row must be where its old sort key says.
            guard at < window.entries.count, window.entries.firstInteger(at: at) == rowid else {
                return .resync("the kept rows lost their order")
            }
            window.entries.remove(at: at)
            window.kept?.remove(rowid)
        }
        window.matching += after.count - before.count
        for row in after {
            guard let (rowid, sort) = Self.key(row, layout, sortCount: plan.order.count) else {
                return .resync("a row without a rowid")
            }
            let at = index(of: sort, rowid: rowid, in: window.entries)
            // Past the kept rows of a window that does not hold them all: not kept.
            if !window.complete, at >= window.entries.count { continue }
            window.entries.insert(at: at) { bytes in
                for column in layout { RowEncoding.append(row[column], to: &bytes) }
            }
            window.kept?.insert(rowid)
        }
        if window.entries.count > window.keep {
            if window.kept != nil {
                for position in window.keep..<window.entries.count {
                    if let rowid = window.entries.firstInteger(at: position) { window.kept?.remove(rowid) }
                }
            }
            window.entries.truncate(to: window.keep)
            if window.kept == nil { window.kept = Set(window.entries.firstIntegers()) }
            window.complete = false
        }
        let total = min(plan.limit ?? Int.max, window.matching)
        let shown = min(total, rowCap)
        if window.complete {
            guard window.entries.count == window.matching else { return .resync("the kept rows miscounted") }
        } else if window.entries.count < shown {
            return .resync("rows left the kept window")
        }
        return .result(
            LiveQueryResult(
                columns: columns, rows: window.entries.rows(prefix: shown), truncated: total > rowCap, total: total))
    }

    private func applyGroups(_ groups: inout Groups, before: [[SQLValue]], after: [[SQLValue]]) -> Outcome {
        var removed: [[KeyPart]: Group] = [:]
        var added: [[KeyPart]: Group] = [:]
        for row in before {
            guard let group = Self.group(row, plan) else { return .resync("a group key is REAL") }
            if group.count > 0 { removed[group.key.map { KeyPart($0)! }] = group }
        }
        for row in after {
            guard let group = Self.group(row, plan) else { return .resync("a group key is REAL") }
            if group.count > 0 { added[group.key.map { KeyPart($0)! }] = group }
        }
        for key in Set(removed.keys).union(added.keys) {
            let gone = removed[key]
            let new = added[key]
            var group =
                groups.groups[key]
                ?? Group(
                    key: (new ?? gone)!.key, count: 0,
                    arguments: plan.arguments.map { _ in
                        Argument(count: 0, sum: 0, min: .null, max: .null, inexact: false)
                    },
                    row: [], opaque: false)
            if group.opaque { return .resync("a changed group sums values that are not integers") }
            if let gone {
                guard gone.count <= group.count else { return .resync("a group lost rows it did not have") }
                group.count -= gone.count
            }
            group.count += new?.count ?? 0
            for index in group.arguments.indices {
                let out = gone.map { $0.arguments[index] }.flatMap { $0.count > 0 ? $0 : nil }
                let into = new.map { $0.arguments[index] }.flatMap { $0.count > 0 ? $0 : nil }
                if out?.inexact == true { return .resync("a removed value is not an integer") }
                if into?.inexact == true { return .resync("an added value is not an integer") }
                guard out != nil || into != nil else { continue }
                let before = group.arguments[index]
                var argument = before
                if let out {
                    guard out.count <= argument.count else { return .resync("a group lost values it did not have") }
                    argument.count -= out.count
                    let (sum, overflow) = argument.sum.subtractingReportingOverflow(out.sum)
                    if overflow { return .resync("a sum overflows") }
                    argument.sum = sum
                }
                if let into {
                    let (sum, overflow) = argument.sum.addingReportingOverflow(into.sum)
                    if overflow { return .resync("a sum overflows") }
                    argument.sum = sum
                    argument.count += into.count
                }
                // The values left of the group's, and the commit's new ones.
                let left = before.count - (out?.count ?? 0)
                guard
                    let min = Self.extreme(
                        before.min, left: left, removed: out?.min, added: into?.min,
                        shown: plan.minimized.contains(index),
                        precedes: { SQLOrdering.compare($0, $1) < 0 }),
                    let max = Self.extreme(
                        before.max, left: left, removed: out?.max, added: into?.max,
                        shown: plan.maximized.contains(index),
                        precedes: { SQLOrdering.compare($0, $1) > 0 })
                else {
                    // Rows at it are gone, and what is left is not known: read it.
                    return .resync("a group's minimum or maximum was removed")
                }
                (argument.min, argument.max) = (min, max)
                if argument.count == 0 { (argument.min, argument.max, argument.sum) = (.null, .null, 0) }
                group.arguments[index] = argument
            }
            for (index, argument) in group.arguments.enumerated()
            where plan.summed.contains(index) && !Self.exact(argument, count: argument.count) {
                return .resync("a sum may leave a double's exact range")
            }
            if group.count == 0 && !plan.keys.isEmpty {
                groups.groups[key] = nil
            } else {
                groups.groups[key] = group
            }
        }
        return result(of: groups).map { .result($0) } ?? .rerun
    }

    /// A group's minimum (or maximum: `precedes(a, b)` says `a` is the more
    /// extreme) after a commit: `current` is the extreme of the values
    /// before it, `left` of which are left; `removed` and `added` the
    /// extremes of the values the commit removed and added. `nil` when a
    /// removed value was at `current` and no added one reaches it: the
    /// extreme of what is left is then not known (the state is read again).
    /// An extreme the query does not show (`shown` false) only bounds the
    /// values (for the exactness of sums): `current` stays a bound then.
    static func extreme(
        _ current: SQLValue, left: Int64, removed: SQLValue?, added: SQLValue?, shown: Bool,
        precedes: (SQLValue, SQLValue) -> Bool
    ) -> SQLValue? {
        guard left > 0 else { return added ?? .null }
        var extreme = current
        if let removed, !precedes(current, removed) {
            // Values at the extreme may all be gone.
            if let added, !precedes(current, added) { return added }
            if shown { return nil }
        }
        if let added, precedes(added, extreme) { extreme = added }
        return extreme
    }

    /// The groups' rows in the query's order; `nil` when two that differ
    /// tie under its ORDER BY (SQLite's sorter leaves their order to itself).
    private func result(of groups: Groups) -> LiveQueryResult? {
        var rows = groups.groups.values.map { (key: $0.key, row: row(of: $0)) }
        if plan.keys.isEmpty, rows.isEmpty {
            // No GROUP BY: one row, even over no rows.
            rows = [
                (
                    [],
                    plan.columns.map { column in
                        if case .aggregate(let function, _) = column, function == .count || function == .countAll {
                            return .integer(0)
                        }
                        if case .aggregate(.total, _) = column { return .real(0) }
                        return .null
                    }
                )
            ]
        }
        var tied = false
        rows.sort { a, b in
            if !plan.order.isEmpty {
                let order = SQLOrdering.compare(
                    plan.order.map { a.row[$0.output!] }, plan.order.map { b.row[$0.output!] }, plan.order)
                if order != 0 { return order < 0 }
                if a.row != b.row { tied = true }
            }
            for (x, y) in zip(a.key, b.key) {
                let order = SQLOrdering.compare(x, y)
                if order != 0 { return order < 0 }
            }
            return false
        }
        if tied { return nil }
        let total = min(plan.limit ?? Int.max, rows.count)
        let shown = min(total, rowCap)
        return LiveQueryResult(
            columns: columns, rows: rows.prefix(shown).map(\.row), truncated: total > rowCap, total: total)
    }

    /// The result as the state stands; `nil` when its order is SQLite's to say.
    var result: LiveQueryResult? {
        switch kind {
        case .rows(let window):
            let total = min(plan.limit ?? Int.max, window.matching)
            let shown = min(total, rowCap)
            return LiveQueryResult(
                columns: columns, rows: window.entries.rows(prefix: shown), truncated: total > rowCap, total: total)
        case .groups(let groups):
            return result(of: groups)
        }
    }
}

extension MaintainedPlan {
    /// The arguments of `sum`, `total` and `avg`.
    var summed: Set<Int> { arguments(of: [.sum, .total, .avg]) }
    var minimized: Set<Int> { arguments(of: [.min]) }
    var maximized: Set<Int> { arguments(of: [.max]) }

    private func arguments(of functions: Set<Aggregate>) -> Set<Int> {
        Set(
            columns.compactMap { column in
                if case .aggregate(let function, let argument?) = column, functions.contains(function) {
                    return argument
                }
                return nil
            })
    }
}

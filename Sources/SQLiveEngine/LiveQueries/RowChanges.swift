/// What changed between two results of a live query, as a patch that
/// turns the older rows into the newer ones: the rows removed, added and
/// changed, each with its position.
///
/// Rows are matched by their key when the query exposes one (the table's
/// rowid or primary key, every column of it in the result: `keyColumns`)
/// and it is unique in the part that differs; otherwise by content. A
/// matched row whose content differs is *changed*; so is one whose content
/// is the same but whose place among the unchanged rows moved.
///
/// Applying it (`apply(to:)`): remove the rows at `removed` and at
/// `changed`'s `from` (positions in the older rows), then insert `added`
/// and `changed` rows at their `at` positions (in the newer rows), in
/// ascending order. The rows neither removed nor changed keep their order.
///
/// Its cost is linear in the rows, with hashing only for the part between
/// the first and the last difference: a one-row change in a million rows
/// compares rows and hashes one.
public struct RowChanges: Hashable, Sendable {
    public struct Removed: Hashable, Sendable {
        /// Its position in the older rows.
        public var from: Int
        public var row: [SQLValue]
    }

    public struct Added: Hashable, Sendable {
        /// Its position in the newer rows.
        public var at: Int
        public var row: [SQLValue]
    }

    public struct Changed: Hashable, Sendable {
        /// Its position in the older rows.
        public var from: Int
        /// Its position in the newer rows.
        public var at: Int
        /// The row as it is now.
        public var row: [SQLValue]
    }

    /// The result columns that matched rows (`nil`: rows were matched by content).
    public var keyColumns: [Int]?
    public var removed: [Removed] = []
    public var added: [Added] = []
    public var changed: [Changed] = []

    public var isEmpty: Bool { removed.isEmpty && added.isEmpty && changed.isEmpty }

    /// The changes from `old` to `new`, matching rows by `keyColumns` when
    /// given and unique where the two differ; rows are equal by `==`.
    public init(from old: [[SQLValue]], to new: [[SQLValue]], keyColumns: [Int]? = nil) {
        // The equal ends cost a comparison per row, and no hashing.
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix, old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        self.init(
            old, new, oldMiddle: prefix..<(old.count - suffix), newMiddle: prefix..<(new.count - suffix),
            same: (old, new), keyColumns: keyColumns)
    }

    /// The changes from `old` to `new`: rows are equal when their bytes are
    /// (as the results compare: text by its bytes, -0.0 apart from 0.0);
    /// the equal ends are walked over (the chunks two results of a kept
    /// query share, not at all), only the rows between them built.
    public init(from old: ResultRows, to new: ResultRows, keyColumns: [Int]? = nil) {
        let prefix = old.commonPrefix(with: new)
        let suffix = old.commonSuffix(with: new, limit: min(old.count, new.count) - prefix)
        let (oldMiddle, newMiddle) = (prefix..<(old.count - suffix), prefix..<(new.count - suffix))
        self.init(
            Array(old[oldMiddle]), Array(new[newMiddle]), oldMiddle: 0..<oldMiddle.count,
            newMiddle: 0..<newMiddle.count, same: (oldMiddle.map(old.encodedRow), newMiddle.map(new.encodedRow)),
            keyColumns: keyColumns)
        guard prefix > 0 else { return }
        for index in removed.indices { removed[index].from += prefix }
        for index in added.indices { added[index].at += prefix }
        for index in changed.indices {
            changed[index].from += prefix
            changed[index].at += prefix
        }
    }

    /// The changes between the rows in `oldMiddle` and in `newMiddle` (the
    /// rows around them equal), with `same`: what each row is compared by
    /// (the rows themselves, or their bytes), by position.
    private init<Row: Hashable>(
        _ old: [[SQLValue]], _ new: [[SQLValue]], oldMiddle: Range<Int>, newMiddle: Range<Int>,
        same: (old: [Row], new: [Row]), keyColumns: [Int]?
    ) {
        guard !oldMiddle.isEmpty || !newMiddle.isEmpty else {
            self.keyColumns = keyColumns
            return
        }

        // Match the middles: pairs (old position, new position).
        var pairs: [(from: Int, at: Int)] = []
        var matchedOld = Set<Int>()
        var unmatchedNew: [Int] = []
        if let keyColumns, !keyColumns.isEmpty,
            let byKey = Self.uniqueIndex(old, oldMiddle, keyColumns),
            Self.uniqueIndex(new, newMiddle, keyColumns) != nil
        {
            self.keyColumns = keyColumns
            for position in newMiddle {
                if let from = byKey[Self.key(new[position], keyColumns)] {
                    pairs.append((from, position))
                    matchedOld.insert(from)
                } else {
                    unmatchedNew.append(position)
                }
            }
        } else {
            self.keyColumns = nil
            var byContent: [Row: [Int]] = [:]
            for position in oldMiddle.reversed() { byContent[same.old[position], default: []].append(position) }
            for position in newMiddle {
                if let from = byContent[same.new[position]]?.popLast() {
                    pairs.append((from, position))
                    matchedOld.insert(from)
                } else {
                    unmatchedNew.append(position)
                }
            }
        }

        // Equal pairs stay where they are when they keep their order: the
        // longest run of them increasing in both positions.
        let equal = pairs.filter { same.old[$0.from] == same.new[$0.at] }.sorted { $0.from < $1.from }
        let kept = Self.longestIncreasing(equal.map(\.at))
        var keptNew = Set<Int>()
        for index in kept { keptNew.insert(equal[index].at) }

        removed = oldMiddle.filter { !matchedOld.contains($0) }.map { Removed(from: $0, row: old[$0]) }
        added = unmatchedNew.map { Added(at: $0, row: new[$0]) }
        changed = pairs.filter { !keptNew.contains($0.at) }.sorted { $0.at < $1.at }
            .map { Changed(from: $0.from, at: $0.at, row: new[$0.at]) }
    }

    /// The newer rows, from the older ones.
    public func apply(to rows: [[SQLValue]]) -> [[SQLValue]] {
        var rows = rows
        for position in (removed.map(\.from) + changed.map(\.from)).sorted(by: >) {
            rows.remove(at: position)
        }
        let insertions = (added.map { ($0.at, $0.row) } + changed.map { ($0.at, $0.row) }).sorted { $0.0 < $1.0 }
        for (position, row) in insertions { rows.insert(row, at: position) }
        return rows
    }

    private static func key(_ row: [SQLValue], _ columns: [Int]) -> [SQLValue] {
        columns.map { $0 < row.count ? row[$0] : .null }
    }

    /// Key → position for the rows in `range`; `nil` when a key repeats
    /// (or holds NULL, which SQLite lets a primary key repeat).
    private static func uniqueIndex(_ rows: [[SQLValue]], _ range: Range<Int>, _ columns: [Int]) -> [[SQLValue]: Int]? {
        var index: [[SQLValue]: Int] = [:]
        index.reserveCapacity(range.count)
        for position in range {
            let key = key(rows[position], columns)
            if key.contains(.null) { return nil }
            if index.updateValue(position, forKey: key) != nil { return nil }
        }
        return index
    }

    /// The indexes of a longest strictly increasing subsequence of `values`
    /// (patience sorting, n log n).
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        var tails: [Int] = []  // indexes into values
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: [Int] = []
        var index = tails.last ?? -1
        while index >= 0 {
            result.append(index)
            index = previous[index]
        }
        return result.reversed()
    }
}

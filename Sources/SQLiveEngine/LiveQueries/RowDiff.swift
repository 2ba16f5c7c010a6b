/// The rows added and removed between two results, as multisets.
///
/// A row that moved but did not change is neither added nor removed; a row
/// that appears twice counts twice.
public struct RowDiff: Hashable, Sendable {
    public var added: [[SQLValue]]
    public var removed: [[SQLValue]]

    public init<Old: Sequence, New: Sequence>(from old: Old, to new: New)
    where Old.Element == [SQLValue], New.Element == [SQLValue] {
        var remaining: [[SQLValue]: Int] = [:]
        for row in old { remaining[row, default: 0] += 1 }
        var added: [[SQLValue]] = []
        for row in new {
            if let count = remaining[row], count > 0 {
                remaining[row] = count - 1
            } else {
                added.append(row)
            }
        }
        var removed: [[SQLValue]] = []
        for row in old {
            if let count = remaining[row], count > 0 {
                remaining[row] = count - 1
                removed.append(row)
            }
        }
        self.added = added
        self.removed = removed
    }

    public var isEmpty: Bool { added.isEmpty && removed.isEmpty }
}

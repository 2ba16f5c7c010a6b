import GRDB

/// Live queries' regions, indexed by the tables they read, so that asking
/// which of them a change concerns costs what the changed table's readers
/// cost, not what every live query does.
///
/// A region that reads the full database (a failing query, one whose
/// tables are unknown) is asked about every change.
struct RegionIndex<Key: Hashable> {
    // Invariant: `keys[k]` is the entry of `k`, and `k` is in
    // `byTable[t]` for each table `t` of that entry (or in `everywhere`
    // when the entry has no tables), nowhere else.
    private struct Entry {
        var region: DatabaseRegion
        /// Lowercased; `nil`: the full database.
        var tables: [String]?
    }
    private var entries: [Key: Entry] = [:]
    private var byTable: [String: Set<Key>] = [:]
    private var everywhere: Set<Key> = []

    var isEmpty: Bool { entries.isEmpty }

    /// Sets a key's region and the tables it reads (`LiveQueryFetcher.tables(in:)`;
    /// `["*"]` or a full-database region: every table).
    mutating func set(_ key: Key, region: DatabaseRegion, tables: [String]) {
        let lowered: [String]? =
            region.isFullDatabase || tables.contains("*") ? nil : Array(Set(tables.map { $0.lowercased() }))
        if let old = entries[key] {
            if old.tables == lowered {
                entries[key]?.region = region
                return
            }
            remove(key)
        }
        entries[key] = Entry(region: region, tables: lowered)
        if let lowered {
            for table in lowered { byTable[table, default: []].insert(key) }
        } else {
            everywhere.insert(key)
        }
    }

    mutating func remove(_ key: Key) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        if let tables = entry.tables {
            for table in tables {
                byTable[table]?.remove(key)
                if byTable[table]?.isEmpty ?? false { byTable[table] = nil }
            }
        } else {
            everywhere.remove(key)
        }
    }

    mutating func removeAll() {
        entries = [:]
        byTable = [:]
        everywhere = []
    }

    /// The keys whose region an event of this kind modifies.
    func keys(modifiedBy kind: DatabaseEventKind) -> [Key] {
        var found = Array(everywhere)
        for key in byTable[kind.tableName.lowercased()] ?? []
        where entries[key]!.region.isModified(byEventsOfKind: kind) {
            found.append(key)
        }
        return found
    }

    /// Whether an event of this kind modifies any region.
    func isModified(byEventsOfKind kind: DatabaseEventKind) -> Bool {
        if !everywhere.isEmpty { return true }
        return byTable[kind.tableName.lowercased()]?.contains {
            entries[$0]!.region.isModified(byEventsOfKind: kind)
        } ?? false
    }

    /// The keys whose region reads one of these tables (lowercased).
    func keys(readingAnyOf tables: some Sequence<String>) -> Set<Key> {
        var found = everywhere
        for table in tables {
            found.formUnion(byTable[table.lowercased()] ?? [])
        }
        return found
    }
}

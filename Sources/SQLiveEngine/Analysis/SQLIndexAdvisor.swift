import CSQLiveSupport
import Foundation
import GRDBSQLite

/// Index advice: the indexes that would make SQLite's planner stop scanning
/// or sorting for a statement, found by asking the planner, not by guessing.
///
/// 1. **What could an index serve?** The statement is prepared over probe
///    tables (virtual tables with the real tables' names and columns, in
///    memory, no rows): the planner hands each one every constraint and
///    ORDER BY it could use, in every join order it weighs
///    (`sqlive_register_planner_probe`).
/// 2. **Candidates**, per table: the equality columns; each with one range
///    column after them; with the ORDER BY columns after them; and each
///    equality column alone. Columns an existing index already leads with,
///    and the rowid, are left out.
/// 3. **Would the planner use them?** On an in-memory copy of the schema
///    (its indexes, and the database's `sqlite_stat1` when it has one), the
///    candidates are created and the statement explained: the candidates the
///    plan uses are the advice, each with the plan it gives alone.
///
/// The user's database is only read (its schema and statistics).
public struct IndexAdvice: Hashable, Sendable {
    public struct Proposal: Hashable, Sendable {
        public var table: String
        public var columns: [String]
        /// `CREATE INDEX name ON table(columns);`
        public var sql: String
        /// The statement's plan with this index (and the existing ones).
        public var planAfter: QueryPlan
    }

    /// The plan today.
    public var planBefore: QueryPlan
    /// Empty when no index would change the plan.
    public var proposals: [Proposal]
}

extension SQLChecker {
    /// Proposes indexes for one statement (see `IndexAdvice`).
    ///
    /// - throws: the statement's own SQLite error when it does not prepare.
    public func adviseIndexes(for sql: String) throws(SQLiveError) -> IndexAdvice {
        let catalog = catalog()
        return try state.withLock { state throws(SQLiveError) in
            let real = state.connection
            real.refreshSchema()
            let statement = LiveDatabase.singleStatement(sql)
            let planBefore = try real.queryPlan(statement)
            // Only what the statement reads, through its views: advice over
            // a schema of 1,000 tables costs what it costs over two.
            let version = real.schemaVersion()
            if state.objects?.version != version { state.objects = (version, real.schemaObjects()) }
            let relevant = Self.relevantRelations(statement, objects: state.objects?.objects ?? [])
            let objects = (state.objects?.objects ?? []).filter { relevant.contains($0.table.lowercased()) }
            let wanted = Self.probe(
                statement, catalog: catalog, tables: relevant,
                views: objects.filter { $0.type == "view" }.map(\.sql))
            let candidates = Self.candidates(wanted, catalog: catalog)
            guard !candidates.isEmpty else { return IndexAdvice(planBefore: planBefore, proposals: []) }

            // The schema, with the database's statistics.
            let copy = try Connection.copyingSchema(
                objects.filter { $0.type == "table" || $0.type == "index" || $0.type == "view" }.map(\.sql))
            let statistics = real.rows("SELECT tbl, idx, stat FROM sqlite_stat1").filter { row in
                row[0].map { relevant.contains($0.lowercased()) } ?? false
            }
            if !statistics.isEmpty {
                copy.execute("ANALYZE")
                copy.execute("DELETE FROM sqlite_stat1")
                for row in statistics {
                    copy.execute(
                        "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES (\(Self.literal(row[0])), "
                            + "\(Self.literal(row[1])), \(Self.literal(row[2])))")
                }
                copy.execute("ANALYZE sqlite_schema")
            }

            let existing = Set(catalog.relations.flatMap { $0.indexes.map { $0.name.lowercased() } })
            var named: [(candidate: Candidate, name: String)] = []
            var taken = existing
            for candidate in candidates {
                let name = Self.indexName(candidate, taken: taken)
                taken.insert(name.lowercased())
                named.append((candidate, name))
            }
            for (candidate, name) in named { copy.execute(Self.createIndex(name, candidate)) }
            let withAll = try copy.queryPlan(statement)
            let used = named.filter { Self.plan(withAll, uses: $0.name) }
            for (_, name) in named { copy.execute("DROP INDEX IF EXISTS \(SQLToken.quoted(name))") }

            var proposals: [IndexAdvice.Proposal] = []
            for (candidate, name) in used {
                let create = Self.createIndex(name, candidate)
                copy.execute(create)
                let planAfter = try copy.queryPlan(statement)
                copy.execute("DROP INDEX \(SQLToken.quoted(name))")
                guard Self.plan(planAfter, uses: name) else { continue }
                proposals.append(
                    IndexAdvice.Proposal(
                        table: candidate.table, columns: candidate.columns, sql: create + ";", planAfter: planAfter))
            }
            return IndexAdvice(planBefore: planBefore, proposals: proposals)
        }
    }

    /// What the planner asked of one table.
    struct Wanted: Equatable {
        var equality: [Int] = []
        var range: [Int] = []
        var orderBy: [Int] = []
    }

    struct Candidate: Hashable {
        var table: String
        var columns: [String]
    }

    /// Prepares the statement over probe tables and collects, per table,
    /// the columns the planner could hand to an index.
    private static func probe(_ statement: String, catalog: SQLCatalog, tables: Set<String>, views: [String])
        -> [String: Wanted]
    {
        final class Recorder {
            var wanted: [String: Wanted] = [:]
            /// ORDER BY terms of the call being recorded, in order.
            var orderBy: [String: [Int]] = [:]
        }
        let recorder = Recorder()
        guard let connection = try? RawConnection.inMemory() else { return [:] }
        defer { withExtendedLifetime(connection) {} }
        let handle = connection.handle
        let context = Unmanaged.passUnretained(recorder).toOpaque()
        let record: sqlive_probe_record = { context, table, column, op, usable, orderBy, _ in
            guard let context, let table else { return }
            let recorder = Unmanaged<Recorder>.fromOpaque(context).takeUnretainedValue()
            let name = String(cString: table).lowercased()
            if op == -1 {
                // A new call of the planner: a new ORDER BY list.
                recorder.orderBy[name] = []
                return
            }
            guard usable != 0, column >= 0 else { return }
            var wanted = recorder.wanted[name] ?? Wanted()
            let column = Int(column)
            if orderBy != 0 {
                // The terms of one call arrive in order; keep the longest list.
                var terms = recorder.orderBy[name] ?? []
                terms.append(column)
                recorder.orderBy[name] = terms
                if terms.count > wanted.orderBy.count { wanted.orderBy = terms }
            } else {
                switch op {
                case SQLITE_INDEX_CONSTRAINT_EQ, SQLITE_INDEX_CONSTRAINT_IS:
                    if !wanted.equality.contains(column) { wanted.equality.append(column) }
                case SQLITE_INDEX_CONSTRAINT_GT, SQLITE_INDEX_CONSTRAINT_GE, SQLITE_INDEX_CONSTRAINT_LT,
                    SQLITE_INDEX_CONSTRAINT_LE:
                    if !wanted.range.contains(column) { wanted.range.append(column) }
                default:
                    break
                }
            }
            recorder.wanted[name] = wanted
        }
        guard sqlive_register_planner_probe(handle, record, context) == SQLITE_OK else { return [:] }
        for relation in catalog.relations where relation.kind == .table && tables.contains(relation.name.lowercased()) {
            let columns = relation.columns.map { SQLToken.quoted($0.name) }.joined(separator: ", ")
            connection.execute(
                "CREATE VIRTUAL TABLE \(SQLToken.quoted(relation.name)) USING sqlive_planner_probe(\(columns))")
        }
        // Views over the probe tables, in the order they were made.
        for create in views {
            connection.execute(create)
        }
        // Preparing plans the statement: the probe records what it asks.
        _ = try? connection.prepare(statement)
        return withExtendedLifetime(recorder) { recorder.wanted }
    }

    /// The tables and views (lowercased) a statement names, and those the
    /// views it names read, to any depth; a name that is no relation (a
    /// column, a CTE) is left in, harmless.
    static func relevantRelations(_ statement: String, objects: [SchemaObject]) -> Set<String> {
        var views: [String: String] = [:]
        for object in objects where object.type == "view" { views[object.name.lowercased()] = object.sql }
        var relevant = Set<String>()
        var pending = [statement]
        while let sql = pending.popLast() {
            let source = SQLSource(sql)
            for token in source.tokens where token.isName {
                let name = source.name(of: token).lowercased()
                guard relevant.insert(name).inserted else { continue }
                if let view = views[name] { pending.append(view) }
            }
        }
        return relevant
    }

    /// The candidate indexes, most specific first, without duplicates.
    private static func candidates(_ wanted: [String: Wanted], catalog: SQLCatalog) -> [Candidate] {
        var candidates: [Candidate] = []
        for (key, wanted) in wanted.sorted(by: { $0.key < $1.key }) {
            guard let relation = catalog.relations.first(where: { $0.name.lowercased() == key }) else { continue }
            // The rowid's alias (INTEGER PRIMARY KEY) needs no index.
            let rowidAlias =
                relation.columns.filter(\.isPrimaryKey).count == 1
                ? relation.columns.first { $0.isPrimaryKey && $0.type.uppercased() == "INTEGER" }?.name : nil
            func names(_ columns: [Int]) -> [String] {
                columns.compactMap { $0 < relation.columns.count ? relation.columns[$0].name : nil }
                    .filter { $0 != rowidAlias }
            }
            let equality = names(wanted.equality)
            var lists: [[String]] = []
            if !equality.isEmpty { lists.append(equality) }
            for column in names(wanted.range) where !equality.contains(column) { lists.append(equality + [column]) }
            let order = names(wanted.orderBy).filter { !equality.contains($0) }
            if !order.isEmpty { lists.append(equality + order) }
            if equality.count > 1 { lists += equality.map { [$0] } }
            let existing = relation.indexes.map { $0.columns.map { $0.lowercased() } }
            for columns in lists {
                let lowered = columns.map { $0.lowercased() }
                // An index that already starts with these columns serves them.
                if existing.contains(where: { $0.starts(with: lowered) }) { continue }
                let candidate = Candidate(table: relation.name, columns: columns)
                if !candidates.contains(candidate) { candidates.append(candidate) }
            }
        }
        return Array(candidates.prefix(32))
    }

    private static func createIndex(_ name: String, _ candidate: Candidate) -> String {
        "CREATE INDEX \(SQLToken.quoted(name)) ON \(SQLToken.quoted(candidate.table))("
            + candidate.columns.map { SQLToken.quoted($0) }.joined(separator: ", ") + ")"
    }

    /// `table_column_column`, made unique.
    private static func indexName(_ candidate: Candidate, taken: Set<String>) -> String {
        let base = ([candidate.table] + candidate.columns).joined(separator: "_")
        var name = base
        var suffix = 2
        while taken.contains(name.lowercased()) {
            name = "\(base)_\(suffix)"
            suffix += 1
        }
        return name
    }

    /// Whether a plan searches or scans with the named index.
    private static func plan(_ plan: QueryPlan, uses index: String) -> Bool {
        plan.nodes.contains { node in
            for form in ["INDEX \(index) ", "INDEX \(SQLToken.quoted(index)) "]
            where (node.detail + " ").contains(form) {
                return true
            }
            return false
        }
    }

    private static func literal(_ value: String??) -> String {
        guard let value = value ?? nil else { return "NULL" }
        return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

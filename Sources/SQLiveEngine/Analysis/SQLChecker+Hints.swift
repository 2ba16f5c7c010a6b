import CSQLiveSupport
import GRDBSQLite

extension SQLChecker {
    /// A statement's plan on the checker's connection, its hints, and with
    /// `advise` the index advice. Nothing runs; nothing is changed.
    ///
    /// - parameter countBudget: how long counting a table's rows (for a
    ///   hint's size) may take; past it, the size is left out (and not
    ///   counted again until the next commit). nil: no limit.
    public func explain(_ sql: String, advise: Bool, countBudget: Duration? = nil) throws(SQLiveError) -> Explanation {
        let plan = try explainQueryPlan(sql)
        return Explanation(
            plan: plan, hints: hints(for: plan, of: sql, countBudget: countBudget),
            advice: advise ? try adviseIndexes(for: sql) : nil)
    }

    /// The plan's costly steps in words (`QueryPlan.hints`), each alias
    /// resolved to its table through the statement's scope, with the
    /// table's size: from `sqlite_stat1`, else counted (up to a million rows;
    /// counts are kept until another commit).
    public func hints(for plan: QueryPlan, of sql: String, countBudget: Duration? = nil) -> [QueryPlan.Hint] {
        let catalog = catalog()
        let source = SQLSource(sql)
        let scope = source.statements.first.map { statement in
            SQLScope(source, statement, catalog: catalog) { self.columnNames(of: $0) }
        }
        return plan.hints { name in
            let table = scope?.entry(named: name)?.relation ?? name
            guard let relation = catalog.relation(named: table) else { return nil }
            return (relation.name, relation.estimatedRows ?? rowCount(of: relation.name, budget: countBudget))
        }
    }

    /// A table's rows, counted up to a million; `nil` beyond, for a view,
    /// or when counting takes longer than `budget`.
    public func rowCount(of table: String, budget: Duration? = nil) -> Int? {
        let limit = 1_000_000
        return state.withLock { state in
            let connection = state.connection
            let version = connection.rows("PRAGMA data_version").first?.first.flatMap { $0.flatMap { Int64($0) } } ?? -1
            if state.rowCounts.version != version { state.rowCounts = (version, [:]) }
            let key = table.lowercased()
            // -1: more than the limit (or no table); -2: not counted within
            // a budget, which a count without one does again.
            if let known = state.rowCounts.counts[key], known != -2 || budget != nil {
                return known < 0 ? nil : known
            }
            let deadline = budget.map { sqlive_deadline_begin(connection.handle, Int64($0 / .nanoseconds(1)), nil) }
            let counted = connection.rows(
                "SELECT count(*) FROM (SELECT 1 FROM \(SQLToken.quoted(table)) LIMIT \(limit + 1))"
            ).first?.first.flatMap { $0.flatMap { Int($0) } }
            if let deadline { sqlive_deadline_end(connection.handle, deadline) }
            if counted == nil, budget != nil {
                state.rowCounts.counts[key] = -2
                return nil
            }
            let count = counted.flatMap { $0 > limit ? nil : $0 }
            state.rowCounts.counts[key] = count ?? -1
            return count
        }
    }
}

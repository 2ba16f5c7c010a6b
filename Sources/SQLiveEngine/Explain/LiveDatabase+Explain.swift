import Foundation
import GRDB

extension LiveDatabase {
    /// The query plan of one statement, from `EXPLAIN QUERY PLAN`.
    ///
    /// The statement is only prepared, never run. Parameters may be left
    /// unbound.
    public func explainQueryPlan(_ sql: String) async throws(SQLiveError) -> QueryPlan {
        do {
            let statement = try Self.explainable(sql)
            return try await writer.read { db in
                let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement)
                return QueryPlan(
                    nodes: rows.map { row in
                        QueryPlan.Node(id: row["id"], parent: row["parent"], detail: row["detail"])
                    })
            }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    /// The bytecode program of one statement, from `EXPLAIN`.
    public func explainBytecode(_ sql: String) async throws(SQLiveError) -> [BytecodeInstruction] {
        do {
            let statement = try Self.explainable(sql)
            return try await writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN " + statement).map { row in
                    BytecodeInstruction(
                        addr: row["addr"], opcode: row["opcode"], p1: row["p1"], p2: row["p2"], p3: row["p3"],
                        p4: Self.text(row["p4"]), p5: row["p5"], comment: Self.text(row["comment"]))
                }
            }
        } catch {
            throw SQLiveError.wrap(error)
        }
    }

    /// A bytecode column as text (`p4` may hold a number or a blob).
    private static func text(_ value: DatabaseValue) -> String? {
        value.isNull ? nil : SQLValue(value).description
    }

    /// The statement without its trailing semicolons and whitespace, and
    /// without a leading `EXPLAIN [QUERY PLAN]` the user may have typed.
    /// The statement to explain; a PRAGMA that would set something is
    /// refused (explaining prepares it, and preparing it would already
    /// change the session's connection: `ConnectionSetting`).
    static func explainable(_ sql: String) throws(SQLiveError) -> String {
        let statement = singleStatement(sql)
        if let pragma = ConnectionSetting.settingPragma(in: statement) {
            throw .invalidSQL("is not explained: " + ConnectionSetting.refusal(pragma: pragma))
        }
        return statement
    }

    static func singleStatement(_ sql: String) -> String {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
        for prefix in ["EXPLAIN QUERY PLAN ", "EXPLAIN "] where text.uppercased().hasPrefix(prefix) {
            text = String(text.dropFirst(prefix.count))
            break
        }
        return text
    }
}

/// A statement's plan, with what is costly in it and, when asked, the
/// indexes that would help.
public struct Explanation: Hashable, Sendable {
    public var plan: QueryPlan
    public var hints: [QueryPlan.Hint]
    public var advice: IndexAdvice?

    public init(plan: QueryPlan, hints: [QueryPlan.Hint], advice: IndexAdvice? = nil) {
        self.plan = plan
        self.hints = hints
        self.advice = advice
    }
}

extension LiveDatabase {
    /// The plan of one statement (on the session's connection, which sees
    /// its temp tables), its hints, and with `advise` the index advice (on a
    /// copy of the schema: the database is never changed).
    ///
    /// The hints' table sizes and the advice are read on a connection of
    /// their own; while the session's transaction locks the file, the hints
    /// go without sizes, and advice fails with the lock's error.
    public func explain(_ sql: String, advise: Bool = false) async throws(SQLiveError) -> Explanation {
        let plan = try await explainQueryPlan(sql)
        // A lock held by the session's own transaction would not be
        // released while we wait: wait briefly, as for another writer's.
        let checker: SQLChecker
        do throws(SQLiveError) {
            checker = try await makeChecker(busyTimeout: .milliseconds(200))
        } catch {
            if advise { throw error }
            return Explanation(plan: plan, hints: plan.hints())
        }
        return Explanation(
            plan: plan, hints: checker.hints(for: plan, of: sql),
            advice: advise ? try checker.adviseIndexes(for: sql) : nil)
    }

    /// A checker of this database: its file read-only, or for an in-memory
    /// database a copy of its schema.
    public func makeChecker(busyTimeout: Duration = .seconds(2)) async throws(SQLiveError) -> SQLChecker {
        switch location {
        case .file(let path), .uri(let path):
            return try SQLChecker(.file(path), busyTimeout: busyTimeout)
        case .memory, .dqlite:
            let schema = try await schema()
            let statements =
                schema.tables.compactMap(\.sql) + schema.views.compactMap(\.sql) + schema.indexes.compactMap(\.sql)
                + schema.triggers.compactMap(\.sql)
            return try SQLChecker(.schema(statements))
        }
    }
}

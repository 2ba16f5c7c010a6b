import Foundation
import GRDB

extension LiveDatabase {
    /// The query plan of one statement, from `EXPLAIN QUERY PLAN`.
    ///
    /// The statement is only prepared, never run. Parameters may be left
    /// unbound.
    public func explainQueryPlan(_ sql: String) async throws(SQLiveError) -> QueryPlan {
        do {
            return try await writer.read { db in
                let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Self.singleStatement(sql))
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
            return try await writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN " + Self.singleStatement(sql)).map { row in
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
    static func singleStatement(_ sql: String) -> String {
        var text = sql.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
        for prefix in ["EXPLAIN QUERY PLAN ", "EXPLAIN "] where text.uppercased().hasPrefix(prefix) {
            text = String(text.dropFirst(prefix.count))
            break
        }
        return text
    }
}

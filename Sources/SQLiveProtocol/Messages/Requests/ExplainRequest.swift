/// Explains one statement without running it: its query plan with what is
/// costly in it (`hints`), or with `bytecode: true` its bytecode program.
/// With `advise: true`, also the indexes that would make the planner stop
/// scanning or sorting, each with the plan it would give (`advice`; the
/// database is not changed).
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 11, "method": "explain", "params": {"sql": "SELECT * FROM games WHERE id = 1"}}
/// <-- {"jsonrpc": "2.0", "id": 11, "result": {"plan": [{"id": 2, "parent": 0,
///      "detail": "SEARCH games USING INTEGER PRIMARY KEY (rowid=?)"}]}}
/// ```
public enum ExplainRequest: RequestType {
    public static let method = "explain"

    public struct Params: Codable, Sendable {
        public var sql: String
        public var bytecode: Bool?
        public var advise: Bool?

        public init(sql: String, bytecode: Bool? = nil, advise: Bool? = nil) {
            self.sql = sql
            self.bytecode = bytecode
            self.advise = advise
        }
    }

    /// Either `plan` (with `hints`, and `advice` when asked) or `bytecode`.
    public struct Result: Codable, Sendable {
        public var plan: [PlanNode]?
        /// The plan's costly steps, in words.
        public var hints: [String]?
        public var advice: [Advice]?
        public var bytecode: [Instruction]?

        public init(
            plan: [PlanNode]? = nil, hints: [String]? = nil, advice: [Advice]? = nil, bytecode: [Instruction]? = nil
        ) {
            self.plan = plan
            self.hints = hints
            self.advice = advice
            self.bytecode = bytecode
        }
    }

    /// An index to create, and the plan the statement would have with it.
    public struct Advice: Codable, Sendable {
        /// `CREATE INDEX …;`
        public var sql: String
        public var planAfter: [PlanNode]

        public init(sql: String, planAfter: [PlanNode]) {
            self.sql = sql
            self.planAfter = planAfter
        }
    }

    /// A node of the plan tree; top-level nodes have parent 0.
    public struct PlanNode: Codable, Sendable {
        public var id: Int
        public var parent: Int
        public var detail: String

        public init(id: Int, parent: Int, detail: String) {
            self.id = id
            self.parent = parent
            self.detail = detail
        }
    }

    /// One bytecode instruction; `p4` and `comment` are null when empty.
    public struct Instruction: Codable, Sendable {
        public var addr: Int
        public var opcode: String
        public var p1: Int
        public var p2: Int
        public var p3: Int
        public var p4: String?
        public var p5: Int
        public var comment: String?

        public init(
            addr: Int, opcode: String, p1: Int, p2: Int, p3: Int, p4: String? = nil, p5: Int, comment: String? = nil
        ) {
            self.addr = addr
            self.opcode = opcode
            self.p1 = p1
            self.p2 = p2
            self.p3 = p3
            self.p4 = p4
            self.p5 = p5
            self.comment = comment
        }

        private enum CodingKeys: String, CodingKey {
            case addr, opcode, p1, p2, p3, p4, p5, comment
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(addr, forKey: .addr)
            try container.encode(opcode, forKey: .opcode)
            try container.encode(p1, forKey: .p1)
            try container.encode(p2, forKey: .p2)
            try container.encode(p3, forKey: .p3)
            try container.encode(p4, forKey: .p4)
            try container.encode(p5, forKey: .p5)
            try container.encode(comment, forKey: .comment)
        }
    }
}

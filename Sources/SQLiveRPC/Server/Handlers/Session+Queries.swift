import SQLiveEngine
import SQLiveProtocol

extension Session {
    /// `query/execute`, on the serial lane: the statements run on the
    /// calling thread, and cancelling `work` interrupts them.
    nonisolated func execute(_ params: QueryExecuteRequest.Params, work: ScheduledWork) throws(ResponseError)
        -> QueryExecuteRequest.Result
    {
        try execute(params, database: openDatabase(), work: work)
    }

    /// Runs statements on a database, on the calling thread.
    nonisolated func execute(_ params: QueryExecuteRequest.Params, database: LiveDatabase, work: ScheduledWork)
        throws(ResponseError) -> QueryExecuteRequest.Result
    {
        let maxRows = params.maxRows ?? QueryExecuteRequest.defaultMaxRows
        guard maxRows >= 0 else {
            throw .invalidParams("must not be negative", field: "maxRows")
        }
        let parameters = params.params?.queryParameters ?? .none
        do {
            try SQLScript.check(params.sql, parameters: parameters)
        } catch {
            throw ResponseError(error)
        }
        do throws(ScriptFailure) {
            let results = try work.whileRunning(interrupt: database.interrupt) { () throws(ScriptFailure) in
                try database.executeBlocking(params.sql, parameters: parameters, maxRows: maxRows)
            }
            return QueryExecuteRequest.Result(results: results.map(Self.statementResult))
        } catch {
            throw ResponseError(error.failure, completed: Self.jsonResults(error.completed))
        }
    }

    /// The results of the statements that ran before an error, for the
    /// error's data; nil (and logged) if they cannot be encoded.
    static func jsonResults(_ results: [StatementResult]) -> [JSONValue]? {
        do {
            return try results.map { try JSONCoding.jsonValue(of: statementResult($0)) }
        } catch {
            ServerLog.warning("cannot encode the results before an error: \(error)")
            return nil
        }
    }

    static func statementResult(_ result: StatementResult) -> QueryExecuteRequest.StatementResult {
        QueryExecuteRequest.StatementResult(
            sql: result.sql, columns: result.columns, rows: result.rows.rpcRows, truncated: result.truncated,
            changes: result.changes, elapsedMs: result.elapsed.protocolMilliseconds)
    }

    /// `explain`.
    func explain(_ params: ExplainRequest.Params) async throws(ResponseError) -> ExplainRequest.Result {
        let database = try openDatabase()
        do {
            try SQLScript.check(params.sql, parameters: .none)
            if params.bytecode == true {
                let program = try await database.explainBytecode(params.sql)
                return ExplainRequest.Result(
                    bytecode: program.map { instruction in
                        ExplainRequest.Instruction(
                            addr: instruction.addr, opcode: instruction.opcode, p1: instruction.p1,
                            p2: instruction.p2, p3: instruction.p3, p4: instruction.p4, p5: instruction.p5,
                            comment: instruction.comment)
                    })
            } else {
                return Self.explainResult(try await database.explain(params.sql, advise: params.advise == true))
            }
        } catch {
            throw ResponseError(error)
        }
    }

    /// A plan, its hints and advice, as `explain` answers them.
    static func explainResult(_ explanation: Explanation) -> ExplainRequest.Result {
        func nodes(_ plan: QueryPlan) -> [ExplainRequest.PlanNode] {
            plan.nodes.map { .init(id: $0.id, parent: $0.parent, detail: $0.detail) }
        }
        return ExplainRequest.Result(
            plan: nodes(explanation.plan), hints: explanation.hints.map(\.explanation),
            advice: explanation.advice.map { advice in
                advice.proposals.map { ExplainRequest.Advice(sql: $0.sql, planAfter: nodes($0.planAfter)) }
            })
    }

    /// `trace/set`.
    func setTrace(_ params: TraceSetRequest.Params) throws(ResponseError) -> EmptyResult {
        setTrace(
            TraceSettings(
                enabled: params.enabled, profile: params.profile ?? false,
                includeHousekeeping: params.housekeeping ?? false))
        return EmptyResult()
    }
}

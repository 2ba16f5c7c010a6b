import SQLiveEngine
import SQLiveProtocol

extension ServerSession {
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
        var collector = QueryResultCollector()
        do {
            if let client, let shared, shared.database === database {
                // The client's own connection (a tab's).
                try work.whileRunning(interrupt: client.interrupt) {
                    try client.run(
                        params.sql, parameters: parameters, maxRows: maxRows, isCancelled: { work.isCancelled },
                        consumer: &collector)
                }
            } else {
                try work.whileRunning(interrupt: database.interrupt) {
                    try database.run(
                        params.sql, parameters: parameters, maxRows: maxRows, forClient: true,
                        isCancelled: { work.isCancelled }, consumer: &collector)
                }
            }
            return QueryExecuteRequest.Result(results: collector.results)
        } catch SQLiveError.resultTooLarge(let limit) {
            throw ResponseError(SQLiveError.resultTooLarge(limit: limit))
        } catch let failure as SQLiteFailure {
            // The failing statement's partial result is not a result.
            var completed = collector.results
            if let index = failure.statementIndex, completed.count > index {
                completed.removeLast(completed.count - index)
            }
            throw ResponseError(failure, completed: Self.jsonResults(completed))
        } catch {
            // Not SQLite's own error (a closed database): a -32001 saying what.
            let failure: SQLiteFailure =
                if case .sqlite(let failure)? = error as? SQLiveError {
                    failure
                } else {
                    SQLiteFailure(code: 1, extendedCode: 1, message: "\(error)")
                }
            throw ResponseError(failure, completed: [])
        }
    }

    /// The results of the statements that ran before an error, for the
    /// error's data; nil (and logged) if they cannot be encoded.
    static func jsonResults(_ results: [QueryExecuteRequest.StatementResult]) -> [JSONValue]? {
        do {
            return try results.map { try JSONCoding.jsonValue(of: $0) }
        } catch {
            ServerLog.warning("cannot encode the results before an error: \(error)")
            return nil
        }
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

/// Collects a script's results straight into their protocol form: each
/// row's values are read from SQLite into `RPCValue`s, with no engine
/// result in between.
struct QueryResultCollector: ResultConsumer {
    private(set) var results: [QueryExecuteRequest.StatementResult] = []
    /// The most bytes the results may weigh (`SQLValue.printedByteCount`):
    /// what one response can carry. Reading stops past it, so memory stays
    /// bounded by it, whatever the data.
    var byteBudget = RPCServer.maximumMessageLength - (64 << 10)
    private var bytes = 0

    mutating func statementDidStart(_ header: StatementHeader) {
        results.append(
            QueryExecuteRequest.StatementResult(
                sql: header.sql, columns: header.columns, rows: [], truncated: false, changes: 0, elapsedMs: 0))
    }

    mutating func consume(row: StatementRow) throws {
        // Weighed before it is copied.
        bytes += row.printedByteCount
        if bytes > byteBudget { throw SQLiveError.resultTooLarge(limit: byteBudget) }
        var values: [RPCValue] = []
        values.reserveCapacity(row.count)
        for column in 0..<row.count {
            values.append(RPCValue(row.value(at: column)))
        }
        results[results.count - 1].rows.append(values)
    }

    mutating func statementDidFinish(_ summary: StatementSummary) {
        results[results.count - 1].truncated = summary.truncated
        results[results.count - 1].changes = summary.changes
        results[results.count - 1].elapsedMs = summary.elapsed.protocolMilliseconds
    }
}

import SQLiveEngine
import SQLiveProtocol

extension ResponseError {
    /// The error that answers an engine error.
    ///
    /// | engine error | code |
    /// |---|---|
    /// | `.sqlite` | -32001, SQLite's codes in `data` |
    /// | `.cannotOpen` | -32001, as `SQLITE_CANTOPEN` (14) |
    /// | `.unknownLiveQuery` | -32011 |
    /// | `.liveQueryNameTaken` | -32012 |
    /// | `.invalidLiveQuery`, `.invalidSQL` | -32602, naming `sql` |
    /// | `.invalidParameters` | -32602, naming `params` |
    /// | `.invalidLiveQueryName` | -32602, naming `name` |
    /// | `.closed` | -32010 |
    /// | `.resultTooLarge` | -32013 |
    /// | `.tooSlowToKeepLive` | -32014, the budget in `data.budgetMs` |
    init(_ error: SQLiveError) {
        switch error {
        case .sqlite(let failure):
            self = ResponseError(failure)
        case .cannotOpen:
            self = ResponseError(
                SQLiteFailure(code: 14, extendedCode: 14, message: error.description))
        case .unknownLiveQuery:
            self = ResponseError(.unknownLiveQuery, error.description)
        case .liveQueryNameTaken(let name):
            // Point editors at the method that redefines a live query.
            self = ResponseError(
                .liveQueryNameTaken,
                "a live query named \(name) already exists (use liveQuery/update to redefine it)")
        case .invalidLiveQuery(let reason):
            self = .invalidParams(reason, field: "sql")
        case .invalidSQL(let reason, let offset):
            self = .invalidParams(reason, field: "sql")
            if let offset, case .object(var data) = data {
                data["offset"] = .integer(Int64(offset))
                self.data = .object(data)
            }
        case .invalidParameters(let reason):
            self = .invalidParams(reason, field: "params")
        case .invalidLiveQueryName(let reason):
            self = .invalidParams(reason, field: "name")
        case .closed:
            self = ResponseError(.noDatabase, "No database open: \(error.description)")
        case .resultTooLarge(let limit):
            self = ResponseError(.resultTooLarge, error.description)
            self.data = .object(["maximumMessageLength": .integer(Int64(limit))])
        case .tooSlowToKeepLive(let budget):
            self = ResponseError(.tooSlowToKeepLive, error.description)
            self.data = .object(["budgetMs": .double(budget.protocolMilliseconds)])
        }
    }

    /// A -32001 error with SQLite's codes in `data`.
    ///
    /// `data` holds `sqliteCode`, `extendedCode`, `message`, and when known
    /// `offset` (the byte in the SQL where SQLite located the error) and
    /// `statementIndex` (the failing statement of a script, from 0).
    init(_ failure: SQLiteFailure, completed: [JSONValue]? = nil) {
        var data: [String: JSONValue] = [
            "sqliteCode": .integer(Int64(failure.code)),
            "extendedCode": .integer(Int64(failure.extendedCode)),
            "message": .string(failure.message),
        ]
        if let offset = failure.offset { data["offset"] = .integer(Int64(offset)) }
        if let index = failure.statementIndex { data["statementIndex"] = .integer(Int64(index)) }
        if let completed { data["results"] = .array(completed) }
        self.init(.sqliteError, failure.message, data: .object(data))
    }
}

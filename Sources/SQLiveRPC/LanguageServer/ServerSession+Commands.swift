import Foundation
import SQLiveEngine
import SQLiveProtocol

/// `workspace/executeCommand`: the code lenses' Run, Watch and Explain.
extension ServerSession {
    /// The statement a command acts on.
    struct CommandTarget: Sendable {
        var sql: String
        /// The statement's first line, 0-based.
        var line: Int
        var document: TextDocument?
        var uri: String
        /// The live query's name, when the command names it.
        var name: String?
    }

    /// Reads a command's target from its arguments: `[{uri, line, sql}]`,
    /// as the code lenses send it, or `[{uri, position}]` for the statement
    /// at a position of an open document.
    nonisolated func commandTarget(_ params: ExecuteCommandRequest.Params) throws(ResponseError) -> CommandTarget {
        guard let argument = params.arguments?.first else {
            throw .invalidParams(
                "\(params.command) takes one argument, {uri, line, sql} or {uri, position}", field: "arguments")
        }
        let target: ExecuteCommandRequest.Target
        do {
            target = try JSONCoding.decode(ExecuteCommandRequest.Target.self, from: argument)
        } catch {
            throw .invalidParams("\(ResponseError(decoding: error).message)", field: "arguments[0]")
        }
        let document = language.document(target.uri)
        if let sql = target.sql {
            return CommandTarget(
                sql: sql, line: target.line ?? 0, document: document, uri: target.uri, name: target.name)
        }
        guard let document else {
            throw .invalidParams("no open document \(target.uri), and no sql given", field: "arguments[0]")
        }
        let source = SQLSource(bytes: document.bytes)
        let encoding = language.encoding
        let statement: SQLSource.Statement?
        if let position = target.position {
            statement = source.nearestStatement(to: document.offset(of: position, encoding: encoding))
        } else if let line = target.line {
            statement = source.statements.first {
                document.position(of: $0.range.lowerBound, encoding: encoding).line >= line
            }
        } else {
            throw .invalidParams("give sql, line or position", field: "arguments[0]")
        }
        guard let statement else {
            throw .invalidParams("no statement there in \(target.uri)", field: "arguments[0]")
        }
        return CommandTarget(
            sql: source.text(of: statement),
            line: document.position(of: statement.range.lowerBound, encoding: encoding).line, document: document,
            uri: target.uri, name: target.name)
    }

    /// The session's database, when the command's document is checked
    /// against it; -32010 when the document names another database.
    nonisolated func commandDatabase(_ target: CommandTarget) throws(ResponseError) -> LiveDatabase {
        let database = try openDatabase()
        if let document = target.document, let declared = document.declaredDatabase,
            let key = language.databaseKey(for: document), language.sessionDatabase(for: key) == nil
        {
            throw ResponseError(
                .noDatabase,
                "this document's database is \(declared), but the session has \(database.location) open: "
                    + "open it with database/open")
        }
        return database
    }

    /// `sqlive.run`, on the serial lane: the statement runs on the calling
    /// thread; cancelling the request (or the progress) interrupts it.
    nonisolated func runCommand(_ params: ExecuteCommandRequest.Params, work: ScheduledWork) throws(ResponseError)
        -> JSONValue
    {
        let target = try commandTarget(params)
        let token = params.workDoneToken
        language.progress(
            token, .init(kind: "begin", title: "sqlive: running line \(target.line + 1)", cancellable: true))
        defer { language.progress(token, .init(kind: "end")) }
        let result = try execute(
            QueryExecuteRequest.Params(sql: target.sql, params: nil, maxRows: nil),
            database: commandDatabase(target), work: work)
        // query/execute's result, and which statement ran: the one at a
        // position is found here.
        guard case .object(var object) = try Self.json(result) else {
            throw .internalError("a result did not encode as an object")
        }
        object["sql"] = .string(target.sql)
        object["line"] = .integer(Int64(target.line))
        return .object(object)
    }

    /// `sqlive.watch`: the live query `FILE:LINE`, registered, or redefined
    /// when it exists.
    func watchCommand(_ params: ExecuteCommandRequest.Params) async throws(ResponseError) -> JSONValue {
        let target = try commandTarget(params)
        let database = try commandDatabase(target)
        let name = Self.liveQueryName(target)
        let exists = liveQueries(of: database).handle(named: name) != nil
        let snapshot: LiveQuerySnapshotResult
        if exists {
            snapshot = try await updateLiveQuery(LiveQueryUpdateRequest.Params(name: name, sql: target.sql))
        } else {
            snapshot = try await registerLiveQuery(LiveQueryRegisterRequest.Params(name: name, sql: target.sql))
        }
        return try Self.json(snapshot)
    }

    /// `sqlive.unwatch`.
    func unwatchCommand(_ params: ExecuteCommandRequest.Params) async throws(ResponseError) -> JSONValue {
        let target = try commandTarget(params)
        _ = try commandDatabase(target)
        _ = try await unregisterLiveQuery(LiveQueryNameParams(name: Self.liveQueryName(target)))
        return .object([:])
    }

    /// `sqlive.explain`: the plan, its hints and index advice, and the
    /// marked tree the hover shows. Read on the checker of the document's
    /// database (else the session's): nothing runs, nothing is changed.
    func explainCommand(_ params: ExecuteCommandRequest.Params) async throws(ResponseError) -> JSONValue {
        let target = try commandTarget(params)
        var checker: SQLChecker?
        if let document = target.document {
            do throws(SQLiveError) {
                checker = try await language.checker(for: document)
            } catch {
                throw ResponseError(error)
            }
        }
        // Without a document's checker, the session's database explains it.
        let database = checker == nil ? try openDatabase() : nil
        let explanation: Explanation
        do throws(SQLiveError) {
            if let checker {
                explanation = try checker.explain(target.sql, advise: true)
            } else {
                explanation = try await database!.explain(target.sql, advise: true)
            }
        } catch {
            throw ResponseError(error)
        }
        guard case .object(var result) = try Self.json(Self.explainResult(explanation)) else {
            throw .internalError("a plan did not encode as an object")
        }
        // The hover's markdown, and the tree as plain text for clients
        // that draw their own (the Neovim plugin).
        result["text"] = .string(LanguageService.describe(explanation))
        result["rendered"] = .string(explanation.plan.rendered)
        result["sql"] = .string(target.sql)
        return .object(result)
    }

    /// The name the command gave, else `FILE:LINE`, the line 1-based.
    static func liveQueryName(_ target: CommandTarget) -> String {
        if let name = target.name { return name }
        let file =
            target.document?.fileName
            ?? URL(string: target.uri).map(\.lastPathComponent) ?? target.uri
        return "\(file):\(target.line + 1)"
    }

    private static func json(_ value: some Encodable) throws(ResponseError) -> JSONValue {
        do {
            return try JSONCoding.jsonValue(of: value)
        } catch {
            throw .internalError("cannot encode the result: \(error)")
        }
    }
}

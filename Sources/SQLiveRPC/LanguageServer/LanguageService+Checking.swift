import Foundation
import SQLiveEngine
import SQLiveLocks
import SQLiveProtocol

// Checking documents and reporting progress.
extension LanguageService {
    // MARK: - Checking

    func perform(_ item: Work) async {
        switch item {
        case .check(let uri):
            state.withLock { _ = $0.pending.remove(uri) }
            await check(uri)
        case .checkAll(let key):
            let documents = state.withLock { Array($0.documents.values) }
            for document in documents where key == nil || databaseKey(for: document) == key {
                await check(document.uri)
            }
        case .giveBackMemory:
            ProcessMemory.giveBackFreed()
        }
    }

    /// Checks a document's latest text and publishes its diagnostics,
    /// unless they are those last published for the same version (a schema
    /// change that changes nothing for it; a check queued twice).
    func check(_ uri: String) async {
        guard let document = document(uri) else { return }
        let encoding = self.encoding
        var diagnostics: [Diagnostic] = []
        do {
            if let checker = try await checker(for: document) {
                let source = SQLSource(bytes: document.bytes)
                diagnostics = checker.check(source).map { problem in
                    Diagnostic(
                        range: document.range(of: problem.range, encoding: encoding), severity: Self.severity(problem),
                        source: "sqlite", code: problem.codeName, message: problem.message)
                }
            } else {
                diagnostics = [
                    Diagnostic(
                        range: TextRange(start: Position(line: 0, character: 0), end: Position(line: 0, character: 0)),
                        severity: .information, source: "sqlive", code: nil,
                        message:
                            "No database to check this SQL against: start sqlive with one, "
                            + "or make the first line \"-- sqlive: database=PATH\"")
                ]
            }
        } catch {
            diagnostics = [
                Diagnostic(
                    range: document.range(of: 0..<0, encoding: encoding), severity: .error, source: "sqlive",
                    code: nil, message: "cannot check this SQL: \(error.description)")
            ]
        }
        let params = PublishDiagnosticsNotification.Params(
            uri: uri, version: document.version, diagnostics: diagnostics)
        let send = state.withLock { state in
            // A document closed meanwhile keeps its cleared diagnostics.
            guard !state.stopped, state.documents[uri] != nil else { return false }
            if let last = state.published[uri], last.version == params.version,
                last.diagnostics == params.diagnostics
            {
                return false
            }
            state.published[uri] = params
            return true
        }
        if send { publish(params) }
    }

    static func severity(_ problem: SQLChecker.Problem) -> Diagnostic.Severity {
        switch problem.severity {
        case .error: .error
        case .warning: .warning
        case .information: .information
        }
    }

    func publish(_ params: PublishDiagnosticsNotification.Params) {
        writer.send(OutgoingMessage.notification(method: PublishDiagnosticsNotification.method, params: params))
    }

    // MARK: - Progress

    /// Reports progress for a token, when the client gave one.
    func progress(_ token: JSONValue?, _ value: ProgressNotification.Value) {
        guard let token else { return }
        writer.send(
            OutgoingMessage.notification(
                method: ProgressNotification.method, params: ProgressNotification.Params(token: token, value: value)))
    }
}

import Foundation
import SQLiveEngine
import SQLiveProtocol

extension ServerSession {
    /// `initialize`: negotiates the position encoding, opens the database
    /// `initializationOptions` names, answers with the server's
    /// capabilities.
    func initialize(_ params: InitializeRequest.Params) async throws(ResponseError) -> InitializeRequest.Result {
        if let client = params.clientInfo {
            ServerLog.debug("client: \(client.name) \(client.version ?? "")")
        }
        let encoding = params.positionEncoding
        language.configure(
            encoding: encoding, supportsProgress: params.supportsWorkDoneProgress,
            plainTextHover: params.prefersPlainTextHover, inlayHintRefresh: params.supportsInlayHintRefresh,
            codeLensRefresh: params.supportsCodeLensRefresh)
        if let milliseconds = params.initializationOptions?.refreshBudgetMs {
            guard milliseconds >= 0, milliseconds <= 86_400_000 else {
                throw .invalidParams(
                    "refreshBudgetMs must be between 0 (no limit) and 86400000",
                    field: "initializationOptions.refreshBudgetMs")
            }
            await setRefreshBudget(milliseconds == 0 ? nil : .milliseconds(Int64(milliseconds)))
        }
        if let path = params.initializationOptions?.database {
            // A relative path is read from the workspace's root, else as
            // the command line's is.
            let root = (params.rootUri.flatMap { URL(string: $0)?.path } ?? params.rootPath)
                .map { URL(fileURLWithPath: $0) }
            await openAtStart(
                path: Self.resolve(path, in: root ?? directory),
                readonly: params.initializationOptions?.readonly ?? false)
        }
        return InitializeRequest.Result(
            serverInfo: .init(name: "sqlive", version: SQLiveVersion.current),
            capabilities: .init(
                positionEncoding: encoding,
                sqlive: .init(
                    protocolVersion: RPCServer.protocolVersion,
                    methods: Dispatcher.standard.methods,
                    notifications: MessageRegistry.serverNotifications.map { $0.method },
                    clientNotifications: MessageRegistry.clientNotifications.map { $0.method },
                    defaultMaxRows: QueryExecuteRequest.defaultMaxRows,
                    maximumMessageLength: RPCServer.maximumMessageLength,
                    liveQueryDiff: true, liveQueryChangesOnly: true)))
    }
}

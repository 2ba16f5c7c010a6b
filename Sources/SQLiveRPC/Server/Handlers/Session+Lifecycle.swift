import SQLiveEngine
import SQLiveProtocol

extension Session {
    /// `initialize`: logs the client, answers with the server's capabilities.
    func initialize(_ params: InitializeRequest.Params) throws(ResponseError) -> InitializeRequest.Result {
        if let client = params.clientInfo {
            ServerLog.debug("client: \(client.name) \(client.version ?? "")")
        }
        return InitializeRequest.Result(
            serverInfo: .init(name: "sqlive", version: SQLiveVersion.current),
            capabilities: .init(
                protocolVersion: RPCServer.protocolVersion,
                methods: Dispatcher.standard.methods,
                notifications: MessageRegistry.serverNotifications.map { $0.method },
                clientNotifications: MessageRegistry.clientNotifications.map { $0.method },
                defaultMaxRows: QueryExecuteRequest.defaultMaxRows,
                maximumMessageLength: RPCServer.maximumMessageLength,
                liveQueryDiff: true))
    }
}

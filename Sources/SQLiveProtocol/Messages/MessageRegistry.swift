/// Every message of the protocol, in one place.
///
/// Adding a method takes three steps: a type in `Requests/` (or
/// `Notifications/`) named after it, a line here, and its handler in the
/// server's `Dispatcher`. The Language Server Protocol's methods
/// (`LanguageServer/`) are listed here too, beside sqlive's own.
public enum MessageRegistry {
    /// The requests the server answers, in the order `initialize` lists them.
    public static let requests: [any RequestType.Type] = [
        InitializeRequest.self,
        ShutdownRequest.self,
        DatabaseOpenRequest.self,
        DatabaseSchemaRequest.self,
        QueryExecuteRequest.self,
        LiveQueryRegisterRequest.self,
        LiveQueryUpdateRequest.self,
        LiveQueryUnregisterRequest.self,
        LiveQueryPauseRequest.self,
        LiveQueryResumeRequest.self,
        LiveQueryListRequest.self,
        ChangesSubscribeRequest.self,
        ChangesUnsubscribeRequest.self,
        ExplainRequest.self,
        TraceSetRequest.self,
        CompletionRequest.self,
        HoverRequest.self,
        CodeLensRequest.self,
        InlayHintRequest.self,
        ExecuteCommandRequest.self,
    ]

    /// The notifications the client may send.
    public static let clientNotifications: [any NotificationType.Type] = [
        ExitNotification.self,
        CancelRequestNotification.self,
        InitializedNotification.self,
        DidOpenTextDocumentNotification.self,
        DidChangeTextDocumentNotification.self,
        DidCloseTextDocumentNotification.self,
        WorkDoneProgressCancelNotification.self,
    ]

    /// The notifications the server sends.
    public static let serverNotifications: [any NotificationType.Type] = [
        LiveQueryChangedNotification.self,
        LiveQueryErrorNotification.self,
        TraceStatementNotification.self,
        DatabaseFileChangedNotification.self,
        ChangesRowsNotification.self,
        PublishDiagnosticsNotification.self,
        ProgressNotification.self,
    ]
}

/// The client finished `initialize`; nothing to do.
public enum InitializedNotification: NotificationType {
    public static let method = "initialized"
    public typealias Params = EmptyParams
}

/// A document was opened in the editor: its whole text.
///
/// ```json
/// --> {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
///      {"uri": "file:///tmp/q.sql", "languageId": "sql", "version": 1, "text": "SELECT * FROM nope;"}}}
/// ```
public enum DidOpenTextDocumentNotification: NotificationType {
    public static let method = "textDocument/didOpen"

    public struct Params: Codable, Sendable {
        public var textDocument: TextDocumentItem

        public init(textDocument: TextDocumentItem) {
            self.textDocument = textDocument
        }
    }
}

/// A document changed: edits in order, each a range and its new text, or
/// the whole text when the range is absent.
///
/// ```json
/// --> {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
///      "textDocument": {"uri": "file:///tmp/q.sql", "version": 2},
///      "contentChanges": [{"range": {"start": {"line": 0, "character": 14},
///                                    "end": {"line": 0, "character": 18}}, "text": "players"}]}}
/// ```
public enum DidChangeTextDocumentNotification: NotificationType {
    public static let method = "textDocument/didChange"

    public struct Change: Codable, Hashable, Sendable {
        public var range: TextRange?
        public var text: String

        public init(range: TextRange?, text: String) {
            self.range = range
            self.text = text
        }
    }

    public struct Params: Codable, Sendable {
        public var textDocument: VersionedTextDocumentIdentifier
        public var contentChanges: [Change]

        public init(textDocument: VersionedTextDocumentIdentifier, contentChanges: [Change]) {
            self.textDocument = textDocument
            self.contentChanges = contentChanges
        }
    }
}

/// A document was closed; its diagnostics are cleared.
public enum DidCloseTextDocumentNotification: NotificationType {
    public static let method = "textDocument/didClose"

    public struct Params: Codable, Sendable {
        public var textDocument: TextDocumentIdentifier

        public init(textDocument: TextDocumentIdentifier) {
            self.textDocument = textDocument
        }
    }
}

/// The server's diagnostics for a document: the whole list, each time.
///
/// ```json
/// <-- {"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
///      "uri": "file:///tmp/q.sql", "version": 1, "diagnostics": [{"code": "SQLITE_ERROR",
///      "message": "no such table: nope", "range": {"end": {"character": 18, "line": 0},
///      "start": {"character": 14, "line": 0}}, "severity": 1, "source": "sqlite"}]}}
/// ```
public enum PublishDiagnosticsNotification: NotificationType {
    public static let method = "textDocument/publishDiagnostics"

    public struct Params: Codable, Sendable {
        public var uri: String
        public var version: Int?
        public var diagnostics: [Diagnostic]

        public init(uri: String, version: Int?, diagnostics: [Diagnostic]) {
            self.uri = uri
            self.version = version
            self.diagnostics = diagnostics
        }
    }
}

/// Progress of a long `workspace/executeCommand`, for the token the client
/// gave as `workDoneToken`.
public enum ProgressNotification: NotificationType {
    public static let method = "$/progress"

    public struct Value: Codable, Hashable, Sendable {
        /// `"begin"`, `"report"` or `"end"`.
        public var kind: String
        public var title: String?
        public var cancellable: Bool?
        public var message: String?

        public init(kind: String, title: String? = nil, cancellable: Bool? = nil, message: String? = nil) {
            self.kind = kind
            self.title = title
            self.cancellable = cancellable
            self.message = message
        }
    }

    public struct Params: Codable, Sendable {
        public var token: JSONValue
        public var value: Value

        public init(token: JSONValue, value: Value) {
            self.token = token
            self.value = value
        }
    }
}

/// The user cancelled a progress: the request it reports on stops.
public enum WorkDoneProgressCancelNotification: NotificationType {
    public static let method = "window/workDoneProgress/cancel"

    public struct Params: Codable, Sendable {
        public var token: JSONValue

        public init(token: JSONValue) {
            self.token = token
        }
    }
}

/// Each read-only statement's live result, in brief, at its end
/// (`textDocument/inlayHint`, LSP 3.17).
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 7, "method": "textDocument/inlayHint", "params": {
///      "textDocument": {"uri": "file:///tmp/q.sql"},
///      "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}}}
/// <-- {"jsonrpc": "2.0", "id": 7, "result": [
///      {"label": "→ 2 rows: (Ann, 12), (Bob, 7)", "paddingLeft": true, "position": {"line": 0, "character": 43}}]}
/// ```
public enum InlayHintRequest: RequestType {
    public static let method = "textDocument/inlayHint"

    public struct Params: Codable, Sendable {
        public var textDocument: TextDocumentIdentifier
        public var range: TextRange

        public init(textDocument: TextDocumentIdentifier, range: TextRange) {
            self.textDocument = textDocument
            self.range = range
        }
    }

    public struct InlayHint: Codable, Hashable, Sendable {
        public var position: Position
        public var label: String
        public var paddingLeft: Bool?
        public var tooltip: String?

        public init(position: Position, label: String, paddingLeft: Bool? = true, tooltip: String? = nil) {
            self.position = position
            self.label = label
            self.paddingLeft = paddingLeft
            self.tooltip = tooltip
        }
    }

    public typealias Result = [InlayHint]
}

/// Server to client: the inlay hints changed, ask again
/// (`workspace/inlayHint/refresh`), sent to clients that support it when a
/// live inline result changes.
public enum InlayHintRefreshRequest {
    public static let method = "workspace/inlayHint/refresh"
}

/// Server to client: the code lenses changed, ask again
/// (`workspace/codeLens/refresh`), sent to clients that support it.
public enum CodeLensRefreshRequest {
    public static let method = "workspace/codeLens/refresh"
}

/// Completion at a place in a document: keywords, tables, the columns of
/// the tables in scope, functions.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 5, "method": "textDocument/completion", "params": {
///      "textDocument": {"uri": "file:///tmp/q.sql"}, "position": {"line": 0, "character": 9}}}
/// <-- {"jsonrpc": "2.0", "id": 5, "result": {"isIncomplete": false, "items": [
///      {"detail": "TEXT · players", "kind": 5, "label": "name", "sortText": "0name"}, ...]}}
/// ```
public enum CompletionRequest: RequestType {
    public static let method = "textDocument/completion"
    public typealias Params = TextDocumentPositionParams

    public struct Item: Codable, Hashable, Sendable {
        /// The LSP's `CompletionItemKind`.
        public enum Kind: Int, Codable, Hashable, Sendable {
            case function = 3
            case field = 5
            case variable = 6
            case `class` = 7
            case module = 9
            case keyword = 14
        }

        public var label: String
        public var kind: Kind
        public var detail: String?
        public var sortText: String?
        /// The text inserted, when it differs from the label (a name that
        /// needs quotes).
        public var insertText: String?

        public init(label: String, kind: Kind, detail: String?, sortText: String?, insertText: String? = nil) {
            self.label = label
            self.kind = kind
            self.detail = detail
            self.sortText = sortText
            self.insertText = insertText
        }
    }

    public struct Result: Codable, Sendable {
        public var isIncomplete: Bool
        public var items: [Item]

        public init(isIncomplete: Bool, items: [Item]) {
            self.isIncomplete = isIncomplete
            self.items = items
        }
    }
}

/// What is under the cursor: a table's columns and indexes, a column's
/// type, or the statement's query plan.
public enum HoverRequest: RequestType {
    public static let method = "textDocument/hover"
    public typealias Params = TextDocumentPositionParams

    public struct Hover: Codable, Sendable {
        public var contents: MarkupContent
        public var range: TextRange?

        public init(contents: MarkupContent, range: TextRange?) {
            self.contents = contents
            self.range = range
        }
    }

    public typealias Result = OptionalResult<Hover>
}

/// Run, Watch and Explain over each statement of a document.
public enum CodeLensRequest: RequestType {
    public static let method = "textDocument/codeLens"

    public struct Params: Codable, Sendable {
        public var textDocument: TextDocumentIdentifier

        public init(textDocument: TextDocumentIdentifier) {
            self.textDocument = textDocument
        }
    }

    public struct CodeLens: Codable, Sendable {
        public var range: TextRange
        public var command: Command

        public init(range: TextRange, command: Command) {
            self.range = range
            self.command = command
        }
    }

    public typealias Result = [CodeLens]
}

/// Runs one of the server's commands: `sqlive.run`, `sqlive.watch`,
/// `sqlive.unwatch`, `sqlive.explain`.
///
/// ```json
/// --> {"jsonrpc": "2.0", "id": 9, "method": "workspace/executeCommand", "params": {
///      "command": "sqlive.run", "arguments": [{"uri": "file:///tmp/q.sql", "line": 0, "sql": "SELECT 1;"}]}}
/// <-- {"jsonrpc": "2.0", "id": 9, "result": {"results": [{"changes": 0, "columns": ["1"], ...}]}}
/// ```
public enum ExecuteCommandRequest: RequestType {
    public static let method = "workspace/executeCommand"

    /// The commands served, as `initialize` lists them.
    public static let commands = ["sqlive.run", "sqlive.watch", "sqlive.unwatch", "sqlive.explain"]

    public struct Params: Codable, Sendable {
        public var command: String
        public var arguments: [JSONValue]?
        /// A token for `$/progress`, when the client wants progress.
        public var workDoneToken: JSONValue?

        public init(command: String, arguments: [JSONValue]?, workDoneToken: JSONValue? = nil) {
            self.command = command
            self.arguments = arguments
            self.workDoneToken = workDoneToken
        }
    }

    /// What a command acts on: a statement of a document, given by its
    /// text and first line (as the code lenses send it), or by a position
    /// in it.
    public struct Target: Codable, Hashable, Sendable {
        public var uri: String
        public var line: Int?
        public var sql: String?
        public var position: Position?
        /// `sqlive.watch` and `sqlive.unwatch`: the live query's name
        /// (default `FILE:LINE`).
        public var name: String?

        public init(
            uri: String, line: Int? = nil, sql: String? = nil, position: Position? = nil, name: String? = nil
        ) {
            self.uri = uri
            self.line = line
            self.sql = sql
            self.position = position
            self.name = name
        }
    }

    public typealias Result = JSONValue
}

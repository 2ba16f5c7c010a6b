/// The Language Server Protocol's basic structures for text documents.
///
/// Positions count lines from 0 and characters in the encoding negotiated
/// by `initialize` (UTF-16 code units unless the client offers UTF-8).

/// A place in a document: a line and a character within it, both from 0.
public struct Position: Codable, Hashable, Sendable {
    public var line: Int
    public var character: Int

    public init(line: Int, character: Int) {
        self.line = line
        self.character = character
    }
}

/// A span of a document, `end` excluded (the LSP's `Range`).
public struct TextRange: Codable, Hashable, Sendable {
    public var start: Position
    public var end: Position

    public init(start: Position, end: Position) {
        self.start = start
        self.end = end
    }
}

/// How positions count characters.
public enum PositionEncoding: String, Codable, Hashable, Sendable {
    case utf8 = "utf-8"
    case utf16 = "utf-16"
    case utf32 = "utf-32"
}

public struct TextDocumentIdentifier: Codable, Hashable, Sendable {
    public var uri: String

    public init(uri: String) {
        self.uri = uri
    }
}

public struct VersionedTextDocumentIdentifier: Codable, Hashable, Sendable {
    public var uri: String
    public var version: Int?

    public init(uri: String, version: Int?) {
        self.uri = uri
        self.version = version
    }
}

/// A document as the client opens it.
public struct TextDocumentItem: Codable, Hashable, Sendable {
    public var uri: String
    public var languageId: String?
    public var version: Int
    public var text: String

    public init(uri: String, languageId: String?, version: Int, text: String) {
        self.uri = uri
        self.languageId = languageId
        self.version = version
        self.text = text
    }
}

/// The params of requests about a place in a document (completion, hover).
public struct TextDocumentPositionParams: Codable, Hashable, Sendable {
    public var textDocument: TextDocumentIdentifier
    public var position: Position

    public init(textDocument: TextDocumentIdentifier, position: Position) {
        self.textDocument = textDocument
        self.position = position
    }
}

/// A problem in a document.
public struct Diagnostic: Codable, Hashable, Sendable {
    /// 1 error, 2 warning, 3 information, 4 hint.
    public enum Severity: Int, Codable, Hashable, Sendable {
        case error = 1
        case warning = 2
        case information = 3
        case hint = 4
    }

    public var range: TextRange
    public var severity: Severity
    /// `"sqlite"` for SQLite's own errors, `"sqlive"` for the server's.
    public var source: String
    /// SQLite's result code name, as `"SQLITE_ERROR"`.
    public var code: String?
    public var message: String

    public init(range: TextRange, severity: Severity, source: String, code: String?, message: String) {
        self.range = range
        self.severity = severity
        self.source = source
        self.code = code
        self.message = message
    }
}

/// Text for a person to read, in Markdown or plain text.
public struct MarkupContent: Codable, Hashable, Sendable {
    public var kind: String
    public var value: String

    public init(markdown value: String) {
        self.kind = "markdown"
        self.value = value
    }

    public init(plainText value: String) {
        self.kind = "plaintext"
        self.value = value
    }
}

/// A command a client runs through `workspace/executeCommand`.
public struct Command: Codable, Hashable, Sendable {
    public var title: String
    public var command: String
    public var arguments: [JSONValue]?

    public init(title: String, command: String, arguments: [JSONValue]?) {
        self.title = title
        self.command = command
        self.arguments = arguments
    }
}

/// A result that may be `null` (hover outside any statement).
public struct OptionalResult<Wrapped: Codable & Sendable>: Codable, Sendable {
    public var value: Wrapped?

    public init(_ value: Wrapped?) {
        self.value = value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        value = container.decodeNil() ? nil : try container.decode(Wrapped.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

/// SQL text split into tokens and statements, as SQLite would split it.
///
/// A statement ends at a `;` that completes it (`sqlite3_complete`), so
/// the `;`s inside a trigger's `BEGIN ... END` do not end the trigger. The
/// last statement may have no `;`. Offsets are bytes of the UTF-8 text.
///
/// ```swift
/// let source = SQLSource("SELECT 1; -- note\nSELECT 2")
/// source.statements.map(source.text(of:))   // ["SELECT 1;", "SELECT 2"]
/// ```
public struct SQLSource: Sendable {
    /// One statement: from its first token that is not a comment to its `;`.
    public struct Statement: Hashable, Sendable {
        /// Its bytes in the text, `;` included.
        public var range: Range<Int>
        /// Its tokens, indices into `tokens` (comments inside included).
        public var tokens: Range<Int>
        /// Whether a `;` ends it.
        public var isTerminated: Bool
    }

    public let bytes: [UInt8]
    public let tokens: [SQLToken]
    public let statements: [Statement]

    public init(_ text: String) {
        self.init(bytes: Array(text.utf8))
    }

    public init(bytes: [UInt8]) {
        self.bytes = bytes
        let tokens = SQLToken.tokenize(bytes)
        self.tokens = tokens
        var statements: [Statement] = []
        var first: Int?
        for (index, token) in tokens.enumerated() {
            if first == nil {
                guard token.kind != .comment, token.kind != .semicolon else { continue }
                first = index
            }
            guard token.kind == .semicolon, let start = first else { continue }
            let range = tokens[start].range.lowerBound..<token.range.upperBound
            if SQLStatementCompleteness.isComplete(Array(bytes[range])) {
                statements.append(Statement(range: range, tokens: start..<index + 1, isTerminated: true))
                first = nil
            }
        }
        if let start = first,
            let last = tokens[start...].lastIndex(where: { $0.kind != .comment })
        {
            statements.append(
                Statement(
                    range: tokens[start].range.lowerBound..<tokens[last].range.upperBound, tokens: start..<last + 1,
                    isTerminated: false))
        }
        self.statements = statements
    }

    /// A statement's text.
    public func text(of statement: Statement) -> String {
        String(decoding: bytes[statement.range], as: UTF8.self)
    }

    /// The text of a token.
    public func text(of token: SQLToken) -> String {
        String(decoding: bytes[token.range], as: UTF8.self)
    }

    /// The name a token spells, without its quotes.
    public func name(of token: SQLToken) -> String {
        SQLToken.name(of: token, in: bytes)
    }

    /// The statement an offset lies in, its end included: a cursor right
    /// after a `;` belongs to the statement it ends.
    public func statement(at offset: Int) -> Statement? {
        statements.first { $0.range.lowerBound <= offset && offset <= $0.range.upperBound }
    }

    /// The statement a cursor at an offset is typing: one that contains it
    /// (not after its `;`, where a new statement starts), or an unterminated
    /// last one before it.
    public func statementBeingTyped(at offset: Int) -> Statement? {
        statements.last { statement in
            statement.range.lowerBound <= offset
                && (!statement.isTerminated || offset < statement.range.upperBound)
        }
    }

    /// The statement at an offset, else the nearest one before it, else the
    /// first one: what "the statement under the cursor" means in a blank.
    public func nearestStatement(to offset: Int) -> Statement? {
        statement(at: offset) ?? statements.last { $0.range.upperBound <= offset } ?? statements.first
    }

    /// The index of the token an offset lies in (or ends), if any.
    public func tokenIndex(at offset: Int) -> Int? {
        var low = 0
        var high = tokens.count
        while low < high {
            let middle = (low + high) / 2
            if tokens[middle].range.upperBound < offset { low = middle + 1 } else { high = middle }
        }
        guard low < tokens.count, tokens[low].range.lowerBound <= offset else { return nil }
        // Between two touching tokens (`p.|c`), the one that starts here wins
        // for a name.
        if tokens[low].range.upperBound == offset, low + 1 < tokens.count, tokens[low + 1].range.lowerBound == offset,
            tokens[low + 1].isName
        {
            return low + 1
        }
        return low
    }

    /// The statement's tokens that are not comments, as indices.
    public func significantTokens(of statement: Statement) -> [Int] {
        statement.tokens.filter { tokens[$0].kind != .comment }
    }

    /// The upper-cased first word of a statement (`SELECT`, `CREATE`...), or
    /// nil.
    public func firstWord(of statement: Statement) -> String? {
        guard let first = significantTokens(of: statement).first, tokens[first].kind == .word else { return nil }
        return text(of: tokens[first]).uppercased()
    }
}

import GRDBSQLite

/// What can be known of a script of SQL before any of it runs: whether it
/// holds a statement at all, a NUL byte, and which parameters each
/// statement binds.
///
/// A script's statements cannot all be prepared before the first one runs
/// (the first may create the table the second reads), so the parameters
/// are found by scanning the text the way SQLite's tokenizer does: outside
/// string literals, quoted names and comments, `?`, `?NNN`, `:name`,
/// `@name` and `$name`, numbered as SQLite numbers them.
///
/// ```swift
/// try SQLScript.check("SELECT ?; SELECT :id", parameters: .positional([1, 2]))   // fine
/// try SQLScript.check("SELECT ?", parameters: .positional([1, 2]))
/// // SQLiveError.invalidParameters("2 values given for 1 parameter")
/// ```
public enum SQLScript {
    /// The parameters of one statement.
    struct Statement: Equatable {
        /// How many values it binds: `sqlite3_bind_parameter_count`.
        var count = 0
        /// Its named parameters, without their prefix, in order of appearance.
        var names: [String] = []
        /// Whether it has `?` or `?NNN` parameters.
        var hasNumbered = false
    }

    /// Refuses SQL that cannot run as it was meant: a NUL byte (SQLite
    /// would read the text only up to it), no statement at all, or values
    /// that do not match the parameters. Nothing has run when it throws.
    public static func check(_ sql: String, parameters: QueryParameters) throws(SQLiveError) {
        // Most SQL sent without values holds no parameter at all (every
        // parameter starts with one of `?:@$#`): then only a NUL byte or
        // the lack of a statement can refuse it, found without the lexer.
        if parameters.isEmpty, let quick = sql.utf8.withContiguousStorageIfAvailable(quickCheck), let quick {
            switch quick {
            case .ok: return
            case .nul(let offset): throw Self.nulByte(at: offset)
            case .noStatement: throw Self.noStatement
            }
        }
        let statements = try checkText(sql)
        try match(parameters, statements.map(\.parameters))
    }

    private enum QuickCheck {
        case ok, nul(Int), noStatement
    }

    /// `check` without the lexer, for SQL that holds no byte a parameter
    /// starts with; nil when it holds one.
    private static func quickCheck(_ bytes: UnsafeBufferPointer<UInt8>) -> QuickCheck? {
        var nul: Int?
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "$"), UInt8(ascii: "#"):
                return nil
            case 0 where nul == nil:
                nul = offset
            default:
                break
            }
        }
        if let nul { return .nul(nul) }
        return holdsStatement(bytes) ? .ok : .noStatement
    }

    /// Whether the text holds anything but whitespace, comments and `;`.
    static func holdsStatement(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while true {
            index += blankPrefixLength(bytes[index...])
            guard index < bytes.count else { return false }
            guard bytes[index] == UInt8(ascii: ";") else { return true }
            index += 1
        }
    }

    /// Refuses a NUL byte or a script without a statement; returns the scan.
    @discardableResult
    static func checkText(_ sql: String) throws(SQLiveError) -> [Scanned] {
        if let offset = sql.utf8.firstIndex(of: 0) {
            throw nulByte(at: sql.utf8.distance(from: sql.utf8.startIndex, to: offset))
        }
        let statements = scan(sql)
        guard statements.contains(where: \.isStatement) else { throw noStatement }
        return statements
    }

    private static func nulByte(at offset: Int) -> SQLiveError {
        .invalidSQL("holds a NUL byte at offset \(offset)", offset: offset)
    }

    private static let noStatement = SQLiveError.invalidSQL("holds no statement")

    /// Whether values fit the statements' parameters: as many values as
    /// parameters, or a value for each name and no other.
    static func match(_ parameters: QueryParameters, _ statements: [Statement]) throws(SQLiveError) {
        let count = statements.reduce(0) { $0 + $1.count }
        func plural(_ number: Int, _ word: String) -> String { "\(number) \(word)\(number == 1 ? "" : "s")" }
        // The shell's: whatever `.parameter` set, NULL for the rest.
        if case .shell = parameters { return }
        if parameters.isEmpty {
            guard count == 0 else { throw .invalidParameters("no value given for \(plural(count, "parameter"))") }
            return
        }
        switch parameters {
        case .positional(let values):
            guard values.count == count else {
                throw .invalidParameters("\(plural(values.count, "value")) given for \(plural(count, "parameter"))")
            }
        case .named(let values):
            if statements.contains(where: \.hasNumbered) {
                throw .invalidParameters("values given by name, but the SQL has ? parameters: give them in an array")
            }
            let names = Set(statements.flatMap(\.names))
            if let missing = statements.flatMap(\.names).first(where: { values[$0] == nil }) {
                throw .invalidParameters("no value given for :\(missing)")
            }
            if let unused = values.keys.sorted().first(where: { !names.contains($0) }) {
                throw .invalidParameters("a value given for :\(unused), which the SQL does not use")
            }
        case .shell: break
        }
    }

    /// One statement's extent in a scan: whether it holds more than
    /// whitespace and comments, and its parameters.
    struct Scanned: Equatable {
        var isStatement = false
        var parameters = Statement()
    }

    /// How many bytes of whitespace and comments the text starts with (an
    /// unterminated block comment runs to the end).
    ///
    /// ```swift
    /// SQLScript.blankPrefixLength(Array("  -- note\nSELECT 1".utf8)[...])   // 10
    /// ```
    @inlinable
    public static func blankPrefixLength<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Int where Bytes.Index == Int {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.endIndex, bytes[index + 1] == UInt8(ascii: "-") {
                while index < bytes.endIndex, bytes[index] != 0x0A { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.endIndex, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index + 1 < bytes.endIndex,
                    !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/"))
                {
                    index += 1
                }
                index = min(index + 2, bytes.endIndex)
            } else {
                break
            }
        }
        return index - bytes.startIndex
    }

    /// Splits the script at each `;` outside literals and comments, and
    /// numbers each statement's parameters as SQLite does: `?` takes the
    /// next number, `?NNN` the number NNN, a name its first number. The
    /// tokens are `SQLToken`'s, the engine's one lexer.
    /// How many statements the text holds (blanks, comments and empty
    /// statements are none), as SQLite's lexer would split it.
    public static func statementCount(_ sql: String) -> Int {
        scan(sql).filter(\.isStatement).count
    }

    static func scan(_ sql: String) -> [Scanned] {
        let bytes = Array(sql.utf8)
        var statements: [Scanned] = []
        var current = Scanned()
        var numbers: [String: Int] = [:]
        SQLToken.forEach(in: bytes) { token in
            switch token.kind {
            case .comment:
                break
            case .semicolon:
                statements.append(current)
                current = Scanned()
                numbers = [:]
            case .parameter where bytes[token.range.lowerBound] == UInt8(ascii: "?"):
                current.isStatement = true
                current.parameters.hasNumbered = true
                let digits = bytes[(token.range.lowerBound + 1)..<token.range.upperBound]
                if !digits.isEmpty, let number = Int(String(decoding: digits, as: UTF8.self)) {
                    current.parameters.count = max(current.parameters.count, number)
                } else {
                    current.parameters.count += 1
                }
            case .parameter:
                current.isStatement = true
                // SQLite numbers `:a` and `@a` apart; both bind the value named "a".
                let name = String(decoding: bytes[token.range], as: UTF8.self)
                if numbers[name] == nil {
                    current.parameters.count += 1
                    numbers[name] = current.parameters.count
                    current.parameters.names.append(String(name.dropFirst()))
                }
            default:
                current.isStatement = true
            }
        }
        statements.append(current)
        return statements
    }
}

extension SQLScript.Statement {
    /// The parameters of a prepared statement, as SQLite knows them.
    init(_ statement: OpaquePointer) {
        count = Int(sqlite3_bind_parameter_count(statement))
        guard count > 0 else { return }
        for index in 1...count {
            guard let name = sqlite3_bind_parameter_name(statement, Int32(index)).map({ String(cString: $0) }),
                let prefix = name.first, prefix != "?"
            else {
                hasNumbered = true
                continue
            }
            names.append(String(name.dropFirst()))
        }
    }
}

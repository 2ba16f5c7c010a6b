import Testing

@testable import SQLiveEngine

@Suite("SQL scripts checked before they run")
struct SQLScriptTests {
    @Test("Parameters are numbered per statement as SQLite numbers them")
    func scanning() {
        let counts = { (sql: String) in SQLScript.scan(sql).map(\.parameters.count) }
        #expect(counts("SELECT ?, ?") == [2])
        #expect(counts("SELECT ?3, ?") == [4])
        #expect(counts("SELECT :a, :a, @a, $a") == [3])
        #expect(counts("SELECT ?; SELECT ?, ?") == [1, 2])
        #expect(counts("SELECT '?', \"?\", [?], `?` -- ?\n /* :a */") == [0])
        #expect(counts("SELECT 'it''s ?', X'3F'") == [0])
        #expect(SQLScript.scan("SELECT :a, @b").first?.parameters.names == ["a", "b"])
        // Each scanned statement tells whether it holds more than comments.
        #expect(SQLScript.scan(" -- x\n; SELECT 1;").map(\.isStatement) == [false, true, false])
    }

    @Test("Without values, SQL holding no parameter mark is judged without the lexer, as the lexer judges it")
    func quickCheckAgreesWithTheLexer() {
        func outcome(_ body: () throws(SQLiveError) -> Void) -> SQLiveError? {
            do {
                try body()
                return nil
            } catch {
                return error
            }
        }
        let texts = [
            "SELECT 1", "", " ", " ;; ", "/* */", "/* unterminated", "-- only\n", "-- only", "SELECT ';'",
            "\n;SELECT 2;\n", "x", "SELECT 1\u{0}", "  \u{0}", "/* ; */ ;", "SELECT 'a' -- ;\n",
        ]
        for text in texts {
            let quick = outcome { () throws(SQLiveError) in try SQLScript.check(text, parameters: .none) }
            let lexer = outcome { () throws(SQLiveError) in
                let statements = try SQLScript.checkText(text)
                try SQLScript.match(.none, statements.map(\.parameters))
            }
            #expect(quick == lexer, "\(text.debugDescription)")
        }
    }

    @Test("A NUL byte, a blank script and mismatched values are refused")
    func refusals() {
        #expect(throws: SQLiveError.invalidSQL("holds a NUL byte at offset 8", offset: 8)) {
            try SQLScript.check("SELECT 1\u{0}; DELETE FROM t", parameters: .none)
        }
        #expect(throws: SQLiveError.invalidSQL("holds no statement")) {
            try SQLScript.check(" /* */ ; -- \n", parameters: .none)
        }
        #expect(throws: SQLiveError.invalidParameters("2 values given for 1 parameter")) {
            try SQLScript.check("SELECT ?", parameters: .positional([.integer(1), .integer(2)]))
        }
        #expect(throws: SQLiveError.invalidParameters("no value given for 1 parameter")) {
            try SQLScript.check("SELECT ?", parameters: .none)
        }
        #expect(throws: SQLiveError.invalidParameters("no value given for :b")) {
            try SQLScript.check("SELECT :a; SELECT :b", parameters: .named(["a": .null]))
        }
        #expect(throws: Never.self) {
            try SQLScript.check("SELECT :a; SELECT @a", parameters: .named(["a": .null]))
            try SQLScript.check("SELECT :a; SELECT @a", parameters: .positional([.null, .null]))
            try SQLScript.check("SELECT 1", parameters: .none)
        }
    }
}

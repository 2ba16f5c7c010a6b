import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("Dot-command parsing")
struct CommandTests {
    @Test func watchTakesTheRestOfTheLineAsSQL() throws {
        #expect(
            try DotCommand.parse(".watch --diff leaders SELECT name, 'a b' FROM players;")
                == .watch(name: "leaders", sql: "SELECT name, 'a b' FROM players", diff: true, replace: false))
        #expect(
            try DotCommand.parse(".watch --replace x SELECT 1")
                == .watch(name: "x", sql: "SELECT 1", diff: false, replace: true))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".watch x") }
        #expect(
            try DotCommand.parse(".watch --changes --max-rows 50 big SELECT * FROM t")
                == .watch(name: "big", sql: "SELECT * FROM t", diff: false, replace: false, changes: true, maxRows: 50))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".watch --max-rows 0 x SELECT 1") }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".watch --max-rows x SELECT 1") }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".watch --diff --changes x SELECT 1") }
    }

    @Test("The fuzzer's find: a timeout beyond Int64 milliseconds is a usage error, not a trap")
    func timeoutOutOfRange() throws {
        // Fuzz/corpus/dot-commands/crash-wait-timeout-overflow, found by scripts/fuzz.sh.
        let found = ".wait n --timeout " + String(repeating: "8", count: 31) + "2.5"
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(found) }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".wait --timeout 31536000.001") }
        #expect(try DotCommand.parse(".wait --timeout 31536000") == .wait(name: nil, timeout: .seconds(31_536_000)))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".exit 256") }
    }

    @Test func commands() throws {
        #expect(try DotCommand.parse(".open 'my db.sqlite' --readonly") == .open(path: "my db.sqlite", readonly: true))
        #expect(try DotCommand.parse(".unwatch --all") == .unwatch(nil))
        #expect(try DotCommand.parse(".unwatch x") == .unwatch("x"))
        #expect(try DotCommand.parse(".wait") == .wait(name: nil, timeout: .seconds(10)))
        #expect(try DotCommand.parse(".wait x --timeout 0.5") == .wait(name: "x", timeout: .milliseconds(500)))
        #expect(try DotCommand.parse(".explain --bytecode SELECT 1;") == .explain(sql: "SELECT 1", bytecode: true))
        #expect(try DotCommand.parse(".explain SELECT 1") == .explain(sql: "SELECT 1", bytecode: false))
        #expect(try DotCommand.parse(".trace profile") == .trace(.profile))
        #expect(try DotCommand.parse(".timer on") == .timer(true))
        #expect(try DotCommand.parse(".headers off") == .headers(false))
        #expect(try DotCommand.parse(".mode csv") == .mode(.init(mode: .csv)))
        #expect(try DotCommand.parse(".mode") == .mode(.init(mode: nil)))
        #expect(try DotCommand.parse(".tables") == .tables(pattern: nil))
        #expect(try DotCommand.parse(".schema pl%") == .schema(pattern: "pl%"))
        #expect(try DotCommand.parse(".exit 3") == .exit(3))
        #expect(try DotCommand.parse(".quit") == .quit)
        #expect(try DotCommand.parse(".help .watch") == .help("watch"))
        #expect(try DotCommand.parse("  .hel") == .help(nil))
        #expect(try DotCommand.parse(".watches") == .watches)
        #expect(try DotCommand.parse(".panel off") == .panel(false))
        #expect(try DotCommand.parse(".panel ON") == .panel(true))
        #expect(throws: DotCommand.ParseError(description: "Usage: .panel on|off")) { try DotCommand.parse(".panel") }
    }

    @Test func importDumpOutputIndexesChanges() throws {
        #expect(
            try DotCommand.parse(".import games.csv games")
                == .importFile(path: "games.csv", table: "games", format: nil, skip: 0, schema: nil))
        #expect(
            try DotCommand.parse(".import --tsv --skip 2 'my file.tsv' t")
                == .importFile(path: "my file.tsv", table: "t", format: .tsv, skip: 2, schema: nil))
        #expect(
            try DotCommand.parse(".import -csv f.csv t --schema temp")
                == .importFile(path: "f.csv", table: "t", format: .csv, skip: 0, schema: "temp"))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".import f.csv") }
        // As sqlite3: --skip reads a number as integerValue does; --ascii is an input format.
        #expect(
            try DotCommand.parse(".import --skip x f.csv t")
                == .importFile(path: "f.csv", table: "t", format: nil, skip: 0, schema: nil))
        #expect(
            try DotCommand.parse(".import --ascii f.csv t")
                == .importFile(path: "f.csv", table: "t", format: .ascii, skip: 0, schema: nil))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".import a b c") }
        #expect(try DotCommand.parse(".dump") == .dump(patterns: []))
        #expect(try DotCommand.parse(".dump pl% games") == .dump(patterns: ["pl%", "games"]))
        var rowids = DumpOptions()
        rowids.preserveRowids = true
        rowids.newlines = true
        #expect(
            try DotCommand.parse(".dump -preserve-rowids t% --newlines") == .dump(patterns: ["t%"], options: rowids))
        #expect(throws: DotCommand.ParseError(description: "Unknown option \"---nosys\" on \".dump\"")) {
            try DotCommand.parse(".dump ---nosys")
        }
        #expect(try DotCommand.parse(".lint fkey -v") == .lint(command: "lint", arguments: ["fkey", "-v"]))
        #expect(try DotCommand.parse(".output out.txt") == .output(path: "out.txt", once: false))
        #expect(try DotCommand.parse(".output") == .output(path: nil, once: false))
        #expect(try DotCommand.parse(".output stdout") == .output(path: nil, once: false))
        #expect(try DotCommand.parse(".once out.txt") == .output(path: "out.txt", once: true))
        #expect(try DotCommand.parse(".once") == .output(path: nil, once: true))
        #expect(try DotCommand.parse(".indexes") == .indexes(pattern: nil))
        #expect(try DotCommand.parse(".indices pl%") == .indexes(pattern: "pl%"))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".indexes a b") }
        #expect(try DotCommand.parse(".changes on") == .changes(true))
        // Abbreviations as sqlite3 reads them: the first command in its
        // order that the name begins, if long enough.
        #expect(try DotCommand.parse(".cha off") == .changes(false))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".ch off") }
        #expect(try DotCommand.parse(".h on") == .headers(true))
        #expect(try DotCommand.parse(".ex") == .exit(0))
        #expect(try DotCommand.parse(".o out.txt") == .output(path: "out.txt", once: false))
        // Quotes and backslash escapes as sqlite3's tokenizer reads them.
        #expect(try DotCommand.parse(".print 'a\\tb' \"c\\td\" e\\tf") == .print("a\\tb c\td e\tf"))
        #expect(try DotCommand.parse(".\"quit\"") == .quit)
        #expect(try DotCommand.parse(".") == DotCommand.none)
        #expect(try DotCommand.parse(".mode tabs") == .mode(.init(mode: .tabs)))
        // Abbreviations as sqlite3's: `.o` is `.output`, `.op` is `.open`.
        #expect(try DotCommand.parse(".op x.sqlite") == .open(path: "x.sqlite", readonly: false))
        #expect(try DotCommand.parse(".o x") == .output(path: "x", once: false))
    }

    /// The output commands read their arguments as sqlite3 does.
    @Test func outputSettings() throws {
        #expect(
            try DotCommand.parse(".mode insert \"my table\" --wrap 5")
                == .mode(.init(mode: .insert, table: "my table", options: ColumnarOptions(wrap: 5))))
        #expect(
            try DotCommand.parse(".mode --ww qbox --wrap 0x10")
                == .mode(.init(mode: .qbox, options: ColumnarOptions(wrap: 16, quote: true))))
        #expect(try DotCommand.parse(".mode c") == .mode(.init(mode: .column)))
        #expect(try DotCommand.parse(".mode t") == .mode(.init(mode: .tcl)))
        #expect(try DotCommand.parse(".mode ta") == .mode(.init(mode: .tabs)))
        #expect(try DotCommand.parse(".mode lines") == .mode(.init(mode: .line)))
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".mode CSV") }
        #expect(throws: DotCommand.ParseError(description: "extra argument: \"c\"")) {
            try DotCommand.parse(".mode insert t c")
        }
        #expect(
            try DotCommand.parse(".separator \"\\t\" \\r\\n") == .separator(column: "\t", row: "\r\n", extra: false))
        #expect(try DotCommand.parse(".separator '\\t'") == .separator(column: "\\t", row: nil, extra: false))
        #expect(try DotCommand.parse(".separator \\037 x y") == .separator(column: "\u{1F}", row: "x", extra: true))
        #expect(try DotCommand.parse(".print a\\tb 'c\\td' \"e \\\"f\\\"\"") == .print("a\tb c\\td e \"f\""))
        #expect(try DotCommand.parse(".width 5 -3 0 1K") == .width([5, -3, 0, 1000]))
        #expect(try DotCommand.parse(".headers 2") == .headers(true))
        #expect(
            try DotCommand.parse(".headers maybe")
                == .warning("ERROR: Not a boolean value: \"maybe\". Assuming \"no\".", then: .headers(false)))
        #expect(try DotCommand.parse(".explain") == .explainSetting(.on))
        #expect(try DotCommand.parse(".explain off") == .explainSetting(.off))
        #expect(try DotCommand.parse(".explain auto") == .explainSetting(.auto))
        #expect(try DotCommand.parse(".explain 2") == .explainSetting(.unchanged))
        #expect(try DotCommand.parse(".explain VACUUM") == .explain(sql: "VACUUM", bytecode: false))
        #expect(try DotCommand.parse(".show") == .show)
        #expect(throws: DotCommand.ParseError(description: "Usage: .show")) { try DotCommand.parse(".show x") }
    }

    @Test func errorsSayWhatToDo() {
        #expect(throws: DotCommand.ParseError(description: "Usage: .timer on|off")) {
            try DotCommand.parse(".timer maybe")
        }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".mode fancy") }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".nosuchcommand") }
        #expect(throws: DotCommand.ParseError.self) { try DotCommand.parse(".wait --timeout") }
    }

    @Test func helpListsEveryContractCommand() {
        let help = DotCommandHelp.overview
        for name in [
            "open", "watch", "pause", "resume", "unwatch", "watches", "wait", "explain", "trace", "timer", "mode",
            "headers", "tables", "schema", "read", "help", "quit", "exit", "panel", "import", "dump", "output", "once",
            "indexes", "changes",
        ] {
            #expect(help.contains("." + name), "missing .\(name)")
        }
        #expect(DotCommandHelp.help(for: "watch")?.contains("--diff") == true)
    }
}

@Suite("Input accumulation")
struct InputAccumulatorTests {
    @Test func sqlGoesOnUntilComplete() {
        var input = InputAccumulator()
        #expect(input.add("SELECT 1,", lineNumber: 1) == nil)
        #expect(!input.isEmpty)
        #expect(input.add("  2;", lineNumber: 2) == .sql("SELECT 1,\n  2;", line: 1))
        #expect(input.isEmpty)
    }

    @Test func dotCommandsAreOneLine() {
        var input = InputAccumulator()
        #expect(input.add(".mode csv", lineNumber: 4) == .dotCommand(".mode csv", line: 4))
        // Inside a statement, a leading dot is SQL.
        #expect(input.add("SELECT", lineNumber: 5) == nil)
        #expect(input.add(".5;", lineNumber: 6) == .sql("SELECT\n.5;", line: 5))
    }

    /// As sqlite3 does, the text is judged only when a line holds a
    /// semicolon: a statement over 40,000 lines is judged once, not once a
    /// line (each judgement reads the whole text: quadratic time).
    @Test func longStatementJudgedOnce() {
        final class Count: @unchecked Sendable { var calls = 0 }
        let count = Count()
        var input = InputAccumulator()
        input.isComplete = { bytes in
            count.calls += 1
            return SQLStatementCompleteness.isComplete(bytes)
        }
        #expect(input.add("INSERT INTO t VALUES", lineNumber: 1) == nil)
        for line in 2...40_000 {
            #expect(input.add(ScriptText(bytes: Array("(\(line), 'row'),".utf8)), lineNumber: line) == nil)
        }
        #expect(input.add("(0, 'last');", lineNumber: 40_001) != nil)
        #expect(count.calls == 1)
        // A semicolon inside a string or comment is judged, and goes on.
        #expect(input.add("SELECT 'a;", lineNumber: 1) == nil)
        #expect(input.add("b';", lineNumber: 2) == .sql("SELECT 'a;\nb';", line: 1))
        #expect(count.calls == 3)
    }

    @Test func triggersAndStringsNeedTheirEnd() {
        var input = InputAccumulator()
        #expect(input.add("CREATE TRIGGER t AFTER INSERT ON a BEGIN", lineNumber: 1) == nil)
        #expect(input.add("  SELECT 1;", lineNumber: 2) == nil)
        #expect(input.add("END;", lineNumber: 3) != nil)
        #expect(input.add("SELECT 'a;", lineNumber: 4) == nil)
        #expect(input.add("b';", lineNumber: 5) == .sql("SELECT 'a;\nb';", line: 4))
    }

    @Test func blankAndCommentLinesAreSkipped() {
        var input = InputAccumulator()
        #expect(input.add("   ", lineNumber: 1) == nil)
        #expect(input.add("-- a comment", lineNumber: 2) == nil)
        #expect(input.isEmpty)
        #expect(input.add("SELECT 1", lineNumber: 3) == nil)
        #expect(input.finish() == .sql("SELECT 1", line: 3))
        #expect(input.finish() == nil)
        #expect(InputAccumulator.isBlank("/* x */ -- y\n"))
    }
}

@Suite("History")
struct HistoryTests {
    @Test func pathFollowsXDG() {
        #expect(History.path(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/sqlive/history")
        #expect(History.path(environment: ["HOME": "/h"]) == "/h/.local/state/sqlive/history")
        #expect(
            History.path(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/sqlive/history")
    }

    @Test func consecutiveDuplicatesAreNotRecorded() {
        var history = History(lastEntry: "SELECT 1;")
        #expect(history.entry(for: "SELECT 1;") == nil)
        #expect(history.entry(for: "SELECT\n  2;") == "SELECT 2;")
        #expect(history.entry(for: "SELECT 2;") == nil)
        #expect(history.entry(for: "SELECT 1;") == "SELECT 1;")
        #expect(history.entry(for: "  ") == nil)
    }
}

@Suite("Session helpers")
struct SessionHelperTests {
    @Test func errorLineComesFromTheOffset() {
        let sql = "SELECT 1;\nSELECT 2;\nSELEC 3;"
        let failure = SQLiteFailure(code: 1, extendedCode: 1, message: "x", offset: 20, statementIndex: 2)
        #expect(ErrorPosition.line(of: failure, in: sql, current: nil, startLine: 5) == 7)
        // A runtime error has no offset: the line where the failing
        // statement's own text starts (after the line break before it).
        let runtime = SQLiteFailure(code: 1, extendedCode: 1, message: "x", statementIndex: 1)
        let second = StatementHeader(index: 1, script: sql, range: 9..<19, columns: ["2"])
        #expect(ErrorPosition.line(of: runtime, in: sql, current: second, startLine: 1) == 2)
        let third = StatementHeader(index: 2, script: sql, range: 19..<28, columns: [])
        #expect(ErrorPosition.line(of: runtime, in: sql, current: third, startLine: 1) == 1)
    }

    @Test func pointerShowsWhereTheErrorIs() {
        #expect(ErrorPosition.pointer(at: 0, in: "SELEC 1;") == "  SELEC 1;\n  ^--- error here\n")
        #expect(
            ErrorPosition.pointer(at: 17, in: "SELECT 1;\nSELECT nope(;")
                == "  SELECT nope(;\n         ^--- error here\n")
        #expect(ErrorPosition.pointer(at: 99, in: "x") == nil)
    }

    @Test func tablesAreColumnated() {
        #expect(Session.columnated(["a", "bb", "ccc", "d"], width: 12) == "a    ccc\nbb   d  \n")
        #expect(NamePattern.like("pl%", "players"))
        #expect(!NamePattern.like("pl_", "players"))
    }
}

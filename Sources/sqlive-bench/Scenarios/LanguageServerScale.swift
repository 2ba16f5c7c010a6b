import Foundation

/// The language server at scale: a 1,000-table schema and a 5,000-statement
/// document over the real binary's stdio, as an editor drives it —
/// diagnostics after opening it, after each keystroke (with the inline
/// results of the first screen live), completion, and hover on statements
/// (their plan, its hints and index advice). The anchor of the hover is what
/// a user would run instead to see a plan: the sqlite3 shell's `EXPLAIN
/// QUERY PLAN` of the same statement, its start included.
enum LanguageServerScale: Scenario {
    static let name = "lsp"

    static func run(quick: Bool, directory: URL) async throws -> ResultTable {
        let tables = quick ? 100 : 1000
        let statements = quick ? 500 : 5000
        let samples = quick ? 20 : 200
        var table = ResultTable(
            scenario: name,
            note: "\(tables) tables of 50 rows, a document of \(statements) statements (selects, joins, counts, "
                + "updates) opened in `sqlive --lsp`; \(samples) samples each. Keystroke: a space inserted, until "
                + "the diagnostics of that version arrive, with the inline results (inlay hints) of the first 60 "
                + "lines live. Hover: on the first word of a different statement each time (its plan, hints with "
                + "table sizes, index advice where a step is costly).")
        guard let sqlive = ChildProcess.sqlivePath else {
            table.checks.append("skipped: no sqlive binary next to sqlive-bench")
            return table
        }
        var schema = ""
        for index in 0..<tables {
            schema += "CREATE TABLE t\(index)(id INTEGER PRIMARY KEY, a INT, b TEXT, c REAL);\n"
            if index % 3 == 0 { schema += "CREATE INDEX t\(index)_a ON t\(index)(a);\n" }
            schema +=
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) "
                + "INSERT INTO t\(index)(a, b, c) SELECT i, 'x' || i, i * 1.5 FROM n;\n"
        }
        let path = try makeDatabase(directory, "lsp.sqlite", schema)
        var lines: [String] = []
        for index in 0..<statements {
            let k = index % tables
            let m = (index * 7 + 3) % tables
            switch index % 4 {
            case 0: lines.append("SELECT a, b FROM t\(k) WHERE b = 'x\(index % 50)';")
            case 1:
                lines.append(
                    "SELECT t\(k).a, t\(m).c FROM t\(k) JOIN t\(m) ON t\(m).id = t\(k).a WHERE t\(m).c > \(index % 40);"
                )
            case 2: lines.append("SELECT count(*) FROM t\(k) WHERE a > \(index % 50);")
            default: lines.append("UPDATE t\(k) SET c = c + 1 WHERE id = \(index % 50);")
            }
        }
        lines.append("SELECT t5. FROM t5;")
        let text = lines.joined(separator: "\n") + "\n"
        let uri = directory.appendingPathComponent("big.sql").absoluteString

        let client = try LSPClient(executable: sqlive, arguments: ["--lsp", path])
        defer { client.stop() }
        let (initialize, _) = try client.request(
            "initialize", ["capabilities": ["workspace": ["inlayHint": ["refreshSupport": true]]]])
        _ = try client.response(to: initialize)
        try client.send(["method": "initialized", "params": [String: Any]()])

        func diagnostics(version: Int) throws -> LSPClient.Received {
            try client.wait("diagnostics of version \(version)") { message in
                guard message["method"] as? String == "textDocument/publishDiagnostics",
                    let params = message["params"] as? [String: Any]
                else { return false }
                return params["version"] as? Int == version
            }
        }
        let opened = try client.send([
            "method": "textDocument/didOpen",
            "params": ["textDocument": ["uri": uri, "languageId": "sql", "version": 1, "text": text]],
        ])
        let first = try diagnostics(version: 1)
        let errors = ((first.message["params"] as? [String: Any])?["diagnostics"] as? [Any])?.count ?? -1
        // One: the statement being typed at the end (`SELECT t5. FROM t5`).
        guard errors == 1 else {
            throw BenchmarkCheckFailed(description: "\(errors) diagnostics, where only the last line is wrong")
        }
        table.add("diagnostics after opening the document (ms)", Double(first.at - opened) / 1e6)

        // The inline results of the first screen.
        let (hints, hintsSent) = try client.request(
            "textDocument/inlayHint",
            [
                "textDocument": ["uri": uri],
                "range": ["start": ["line": 0, "character": 0], "end": ["line": 60, "character": 0]],
            ])
        let hintsAnswer = try client.response(to: hints)
        let hintCount = (hintsAnswer.message["result"] as? [Any])?.count ?? 0
        // Statements 0 to 60 touch the range; every fourth is an UPDATE.
        let readOnly = (0...60).filter { $0 % 4 != 3 }.count
        guard hintCount == readOnly else {
            throw BenchmarkCheckFailed(description: "\(hintCount) inlay hints for \(readOnly) read-only statements")
        }
        table.add("inline results of the first 60 lines, first time (ms)", Double(hintsAnswer.at - hintsSent) / 1e6)

        // Keystrokes.
        var keystrokes = Samples()
        for sample in 0..<samples {
            let version = sample + 2
            let line = 10 + sample % 40
            let sent = try client.send([
                "method": "textDocument/didChange",
                "params": [
                    "textDocument": ["uri": uri, "version": version],
                    "contentChanges": [
                        [
                            "range": [
                                "start": ["line": line, "character": 0], "end": ["line": line, "character": 0],
                            ],
                            "text": " ",
                        ]
                    ],
                ],
            ])
            keystrokes.append(try diagnostics(version: version).at - sent)
            lines[line] = " " + lines[line]
        }
        table.add("keystroke → fresh diagnostics, p50 (ms)", keystrokes.percentile(50))
        table.add("keystroke → fresh diagnostics, p99 (ms)", keystrokes.percentile(99))

        // Completion of a table's columns.
        var completions = Samples()
        for _ in 0..<samples {
            let (id, sent) = try client.request(
                "textDocument/completion",
                ["textDocument": ["uri": uri], "position": ["line": statements, "character": 10]])
            let answer = try client.response(to: id)
            let items = ((answer.message["result"] as? [String: Any])?["items"] as? [Any])?.count ?? 0
            guard items == 4 else { throw BenchmarkCheckFailed(description: "\(items) completions for t5.") }
            completions.append(answer.at - sent)
        }
        table.add("completion of a table's columns, p50 (ms)", completions.percentile(50))

        // Hover on statements, and the shell's EXPLAIN QUERY PLAN of the same.
        var hovers = Samples()
        var shell = Samples()
        for sample in 0..<samples {
            let statement = (sample * 37 + 1) % statements
            let (id, sent) = try client.request(
                "textDocument/hover",
                [
                    "textDocument": ["uri": uri],
                    "position": ["line": statement, "character": lines[statement].prefix { $0 == " " }.count + 1],
                ])
            let answer = try client.response(to: id)
            let value =
                ((answer.message["result"] as? [String: Any])?["contents"] as? [String: Any])?["value"] as? String
            guard value?.contains("query plan") == true else {
                throw BenchmarkCheckFailed(description: "no plan in the hover of statement \(statement)")
            }
            hovers.append(answer.at - sent)
            if sample < samples / 4 {
                let start = Monotonic.now()
                let run = try ChildProcess.time(
                    [
                        "/usr/bin/sqlite3", path,
                        "EXPLAIN QUERY PLAN " + lines[statement].trimmingCharacters(in: .whitespaces),
                    ])
                guard run.status == 0 else { throw BenchmarkCheckFailed(description: "sqlite3 failed") }
                shell.append(Monotonic.now() - start)
            }
        }
        table.add(
            "hover on a statement, p50 (ms)", hovers.percentile(50), anchor: shell.percentile(50),
            "sqlite3 shell: EXPLAIN QUERY PLAN, p50")
        table.add("hover on a statement, p99 (ms)", hovers.percentile(99))
        table.checks.append(
            "one diagnostic (the statement being typed); an inlay hint per read-only statement of the first screen; 4 columns completed; a plan in every hover"
        )
        return table
    }
}

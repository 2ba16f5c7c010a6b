import Foundation
import SQLiveTestSupport
import Testing

@testable import SQLiveREPL

/// The sqlite3 shell's SQL functions, compared with the real `sqlite3`
/// 3.40.1 on the same scripts: every value goes through `quote()` (or
/// `hex()`), so that the comparison does not depend on how NULL and blobs
/// print in list mode.
@Suite("The sqlite3 shell's SQL functions", .timeLimit(.minutes(5)))
struct ShellFunctionsTests {
    /// Runs `script` on standard input of both shells, each in a directory
    /// of its own (as their current directory), with `VISUAL` unset.
    func compare(_ script: String, database: String = ":memory:") async throws -> (ProcessOutput, ProcessOutput) {
        let ours = try TemporaryDirectory()
        let theirs = try TemporaryDirectory()
        let environment = Processes.environment(directory: ours).filter { $0.key != "VISUAL" }
        func run(_ executable: String, _ directory: TemporaryDirectory) async throws -> ProcessOutput {
            let (process, out, err) = try Processes.start(
                executable, [database], stdin: script, environment: environment, directory: directory,
                cwd: directory.path)
            #expect(await Processes.wait(process))
            return ProcessOutput(
                stdout: try String(contentsOfFile: out, encoding: .utf8),
                stderr: try String(contentsOfFile: err, encoding: .utf8), status: await process.exit())
        }
        return (try await run(Processes.sqlive, ours), try await run("/usr/bin/sqlite3", theirs))
    }

    /// Expects the same output, and the same error messages (sqlite3's
    /// `Runtime error near line N:` prefix aside, which is another matter).
    func expectSame(_ script: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let (ours, theirs) = try await compare(script)
        #expect(!theirs.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(ours.stdout == theirs.stdout, sourceLocation: sourceLocation)
        #expect(Self.messages(ours.stderr) == Self.messages(theirs.stderr), sourceLocation: sourceLocation)
        #expect(ours.status == theirs.status, sourceLocation: sourceLocation)
    }

    /// Each error line's message, without its location.
    static func messages(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map { line in
            let text = String(line)
            guard
                let range = text.range(
                    of: #"^(Runtime |Parse )?[Ee]rror:? near line \d+: "#, options: .regularExpression)
            else { return text }
            return String(text[range.upperBound...])
        }
    }

    static let decimals = [
        "'0'", "'-0'", "'1.5'", "'  +00012.3400'", "'1e5'", "'1.5e-3'", "'12e-1'", "'1e-1'", "'0e-5'", "'-'", "''",
        "'abc'", "'1.2.3'", "'1e'", "'1e+'", "'x1y2'", "'123456789012345678901234567890'", "'-0.000'",
        "'999.999'", "'-1'", "'1'", "'0.5'", "'1e-20'", "'-2.5E+3'", "0.1", "47.49", "1e300", "-1e-300",
        "9223372036854775807", "-42", "NULL", "x'313233'", "'.5'", "'5.'", "' \t7'",
    ]

    @Test("decimal, decimal_cmp, decimal_add, decimal_sub and decimal_mul on every pair of many inputs")
    func decimalArithmetic() async throws {
        let values = Self.decimals.map { "(\($0))" }.joined(separator: ",")
        try await expectSame(
            """
            CREATE TABLE v(x);
            INSERT INTO v VALUES \(values);
            SELECT quote(x), quote(decimal(x)) FROM v;
            SELECT quote(decimal_cmp(a.x, b.x)), quote(decimal_add(a.x, b.x)), quote(decimal_sub(a.x, b.x)),
              quote(decimal_mul(a.x, b.x)) FROM v AS a, v AS b;
            SELECT quote(decimal_sum(x)) FROM v;
            SELECT quote(decimal_sum(x)) FROM v WHERE 0;
            SELECT quote(decimal_sum(x)) FROM v WHERE x IS NULL;
            SELECT quote(decimal_sum(x) OVER (ORDER BY rowid ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)) FROM v;
            SELECT quote(x) FROM v ORDER BY x COLLATE decimal, rowid;
            SELECT quote(decimal_mul('0.5', '0.5')), quote(decimal('1e40')), quote(decimal_add('-1', '1'));
            """)
    }

    @Test("The powers of two of shell1-8.1: 47.49 exactly")
    func exactDecimalOfAReal() async throws {
        try await expectSame(
            """
            CREATE TABLE pow2(x INTEGER PRIMARY KEY, v TEXT);
            WITH RECURSIVE c(x,v) AS (VALUES(0,'1') UNION ALL SELECT x+1, decimal_mul(v,'2') FROM c WHERE x+1<=971)
              INSERT INTO pow2(x,v) SELECT x, v FROM c;
            WITH RECURSIVE c(x,v) AS (VALUES(-1,'0.5') UNION ALL SELECT x-1, decimal_mul(v,'0.5') FROM c WHERE x-1>=-1075)
              INSERT INTO pow2(x,v) SELECT x, v FROM c;
            WITH c(n) AS (VALUES(47.49), (0.1), (1e-310), (1.7976931348623157e308))
              SELECT decimal_mul(ieee754_mantissa(c.n),pow2.v) FROM pow2, c WHERE pow2.x=ieee754_exponent(c.n);
            """)
    }

    @Test("ieee754, ieee754_mantissa, ieee754_exponent, ieee754_to_blob and ieee754_from_blob")
    func ieee754() async throws {
        let values = [
            "0.0", "-0.0", "1.0", "47.49", "1e-320", "4.9406564584124654e-324", "1e308*10", "-1e308*10", "2", "0.1",
            "-3", "9007199254740993", "'abc'", "'1.5'", "x'3ff0000000000000'", "x'00'", "NULL", "-2.5e-300",
        ].map { "(\($0))" }.joined(separator: ",")
        // Not (-9223372036854775808, 0): sqlite3 3.40.1 loops forever there
        // (its negation overflows); sqlive returns NULL.
        let pairs = [
            "6683623321994527,-47", "0,0", "0,2000", "0,-2000", "-1,0", "1,-1074",
            "1,-1080", "1,1024", "9007199254740993,0", "3,10000", "3,-10001", "-5,3", "'7','-1'", "NULL,1",
            "4503599627370497,-52", "9223372036854775807,-63",
        ]
        try await expectSame(
            """
            CREATE TABLE v(x);
            INSERT INTO v VALUES \(values);
            SELECT quote(x), quote(ieee754(x)), quote(ieee754_mantissa(x)), quote(ieee754_exponent(x)),
              quote(ieee754_to_blob(x)), quote(ieee754_from_blob(x)), quote(ieee754_from_blob(ieee754_to_blob(x)))
              FROM v;
            \(pairs.map { "SELECT quote(ieee754(\($0)));" }.joined(separator: "\n"))
            """)
    }

    @Test("sha3 of values across the rate's edges, and sha3_query of results and of errors")
    func sha3() async throws {
        var script = "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2.5), ('x', NULL), (x'00ff', -7);\n"
        for size in ["", ", 224", ", 256", ", 384", ", 512"] {
            for value in ["'abc'", "''", "x''", "1.5", "NULL", "42", "zeroblob(1000)"] {
                script += "SELECT quote(sha3(\(value)\(size)));\n"
            }
            for length in [71, 72, 103, 104, 135, 136, 137, 143, 144, 271, 272] {
                script += "SELECT hex(sha3(substr(hex(zeroblob(200)), 1, \(length))\(size)));\n"
            }
            script += "SELECT hex(sha3_query('SELECT * FROM t; SELECT 1, 2.5, ''x'', NULL, x''00''; '\(size)));\n"
        }
        script += """
            SELECT sha3('abc', 100);
            SELECT hex(sha3_query('  '));
            SELECT sha3_query('SELEC 1');
            SELECT sha3_query('SELECT 1; INSERT INTO t VALUES (1, 2)');
            SELECT sha3_query('SELECT 1', 7);
            SELECT quote(sha3_query(NULL));
            """
        try await expectSame(script)
    }

    @Test("readfile, writefile (files, directories, links, modes, times) and lsmode")
    func files() async throws {
        let script = """
            SELECT writefile('a.bin', x'0001ff');
            SELECT quote(readfile('a.bin')), quote(readfile('missing')), quote(readfile(NULL));
            SELECT writefile('sub/dir/b.txt', 'hi');
            SELECT quote(readfile('sub/dir/b.txt'));
            SELECT quote(writefile('d', NULL, 16877)), quote(writefile('d', NULL, 16832));
            SELECT quote(writefile('link', 'a.bin', 41471)), quote(readfile('link'));
            SELECT quote(writefile('m.txt', 'x', 33188, 1000000000));
            SELECT quote(writefile('e.txt', ''));
            SELECT quote(readfile('e.txt')), quote(writefile('n.txt', NULL)), quote(readfile('n.txt'));
            SELECT quote(writefile('a.bin/x', 'y'));
            SELECT writefile('a.bin/x', 'y', 33188);
            SELECT writefile('a.bin/x', NULL, 16877);
            SELECT writefile('link', 'a.bin', 41471);
            SELECT writefile('x');
            SELECT writefile('x', 1, 2, 3, 4);
            SELECT quote(writefile(NULL, 'y'));
            SELECT lsmode(33188), lsmode(16877), lsmode(41471), lsmode(0), lsmode(-1), lsmode('x');
            """
        let (ours, theirs) = try await compare(script)
        #expect(ours.stdout == theirs.stdout)
        #expect(Self.messages(ours.stderr) == Self.messages(theirs.stderr))
    }

    @Test("The files writefile made are the same files")
    func writtenFiles() async throws {
        let ours = try TemporaryDirectory()
        let script = """
            SELECT writefile('sub/b.txt', 'hi', 33152, 1000000000);
            SELECT writefile('d', NULL, 16877);
            """
        let (process, _, _) = try Processes.start(
            Processes.sqlive, [":memory:"], stdin: script, environment: Processes.environment(directory: ours),
            directory: ours, cwd: ours.path)
        #expect(await Processes.wait(process))
        let attributes = try FileManager.default.attributesOfItem(atPath: ours.file("sub/b.txt"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect((attributes[.modificationDate] as? Date) == Date(timeIntervalSince1970: 1_000_000_000))
        #expect(try String(contentsOfFile: ours.file("sub/b.txt"), encoding: .utf8) == "hi")
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: ours.file("d"), isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("edit(): no editor, NULL, a failing editor, text, blobs and line ends")
    func edit() async throws {
        try await expectSame(
            """
            SELECT edit('abc');
            SELECT edit(NULL, 'true');
            SELECT edit('abc', 'false');
            SELECT quote(edit('abc', 'sed -i s/b/X/'));
            SELECT quote(edit(x'00ff', 'true')), quote(edit(12, 'true'));
            SELECT hex(edit('a' || char(13) || char(10) || 'b', 'sed -i s/b/c/'));
            SELECT hex(edit('ab', 'sed -i s/b/x\\\\r/'));
            """)
    }

    @Test("The functions are on the session's connection, not on live queries'")
    func onlyTheSession() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, "CREATE TABLE t(x); INSERT INTO t VALUES ('1.5');")
        let output = try await Processes.sqlive(
            [database, "-c", "SELECT decimal_add(x, '1') FROM t;", "-c", ".watch w SELECT decimal(x) FROM t"],
            directory: directory)
        #expect(output.stdout == "2.5\n")
        #expect(output.stderr.contains("no such function: decimal"))
    }

    @Test("Decimal numbers: the extension's reading and text")
    func decimalValues() {
        func text(_ input: String) -> String? {
            ShellDecimal(text: Array(input.utf8)).text.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(text("0.5") == "0.5")
        #expect(text("1e-1") == "0.1")
        #expect(text("0e-5") == "0.00000")
        #expect(text("-") == "0")
        #expect(text("12.3400") == "12.3400")
        #expect(ShellDecimal(text: Array("1e-1".utf8)).compare(ShellDecimal(text: Array("0.2".utf8))) > 0)
        var sum = ShellDecimal(text: Array("-1".utf8))
        sum.add(ShellDecimal(text: Array("1".utf8)))
        #expect(sum.text.map { String(decoding: $0, as: UTF8.self) } == "-0")
    }
}

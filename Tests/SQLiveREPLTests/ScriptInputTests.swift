import Foundation
import Testing

/// Script input that is not plain UTF-8 text, through the real binary:
/// nothing is dropped, nothing is altered.
@Suite("Scripted sessions: NUL bytes and bytes that are not UTF-8", .serialized, .timeLimit(.minutes(5)))
struct ScriptInputTests {
    func database() async throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory()
        let database = directory.file("t.sqlite")
        try await Processes.sqlite3(database, "CREATE TABLE t(x TEXT);")
        return (directory, database)
    }

    func bytes(_ parts: [String], separatedBy byte: UInt8) -> Data {
        Data(parts.map { Array($0.utf8) }.joined(separator: [byte]))
    }

    @Test("A NUL byte fails the statement that holds it, with its line; the next statements run")
    func nulInPipedInput() async throws {
        let (directory, database) = try await database()
        let input = bytes(["SELECT 1;\nSELECT 'a", "b';\nSELECT 2;\n"], separatedBy: 0)
        let output = try await Processes.sqlive([database], input: input, directory: directory)
        #expect(output.stdout == "1\n2\n")
        #expect(output.stderr == "Error: near line 2: a NUL byte at column 10: the statement was not run\n")
        #expect(output.status == 1)
    }

    @Test("A NUL byte at the very start is an error, and the rest still runs")
    func nulAtStart() async throws {
        let (directory, database) = try await database()
        let input = bytes(["", "\nSELECT 1;\n"], separatedBy: 0)
        let output = try await Processes.sqlive([database], input: input, directory: directory)
        // The NUL's line is part of the statement that ends on the next line.
        #expect(output.stdout == "")
        #expect(output.stderr.hasPrefix("Error: near line 1: a NUL byte at column 1"))
        #expect(output.status == 1)
        let output2 = try await Processes.sqlive(
            [database], input: bytes(["", ";\nSELECT 1;\n"], separatedBy: 0), directory: directory)
        #expect(output2.stdout == "1\n")
        #expect(output2.status == 1)
    }

    @Test("--bail stops at the statement that holds a NUL byte")
    func nulWithBail() async throws {
        let (directory, database) = try await database()
        let input = bytes(["SELECT 1;\nSELECT '", "';\nSELECT 2;\n"], separatedBy: 0)
        let output = try await Processes.sqlive(["--bail", database], input: input, directory: directory)
        #expect(output.stdout == "1\n")
        #expect(output.status == 1)
    }

    @Test("A NUL byte in a -f file and in a .read file is reported with the file's line")
    func nulInFiles() async throws {
        let (directory, database) = try await database()
        let script = directory.file("nul.sql")
        try bytes(
            ["INSERT INTO t VALUES ('kept');\nINSERT INTO t VALUES ('x", "y');\nSELECT count(*) FROM t;\n"],
            separatedBy: 0
        ).write(to: URL(fileURLWithPath: script))
        let fromFile = try await Processes.sqlive([database, "-f", script], directory: directory)
        #expect(fromFile.stdout == "1\n")
        #expect(fromFile.stderr == "Error: near line 2: a NUL byte at column 25: the statement was not run\n")
        #expect(fromFile.status == 1)
        let fromRead = try await Processes.sqlive([database, "-c", ".read \(script)"], directory: directory)
        #expect(fromRead.stdout == "2\n")
        #expect(fromRead.stderr == "Error: \(script) near line 2: a NUL byte at column 25: the statement was not run\n")
        #expect(fromRead.status == 1)
        #expect(try await Processes.sqlite3Output(database, "SELECT x FROM t;") == "kept\nkept\n")
    }

    @Test("Text that is not UTF-8 is refused with its line and column, and never stored altered")
    func latin1IsRefused() async throws {
        let (directory, database) = try await database()
        let script = directory.file("latin1.sql")
        // 'café' in Latin-1: E9 is not UTF-8.
        let latin1 = Data("INSERT INTO t VALUES ('caf".utf8) + Data([0xE9]) + Data("');\nSELECT 'after';\n".utf8)
        try latin1.write(to: URL(fileURLWithPath: script))
        let output = try await Processes.sqlive([database, "-f", script], directory: directory)
        #expect(output.stdout == "after\n")
        #expect(output.stderr.hasPrefix("Error: near line 1: a byte that is not UTF-8 (0xE9) at column 27"))
        #expect(output.stderr.contains("CAST(X'E9' AS TEXT)"))
        #expect(output.status == 1)
        let piped = try await Processes.sqlive([database], input: latin1, directory: directory)
        #expect(piped.stdout == "after\n")
        #expect(piped.status == 1)
        #expect(try await Processes.sqlite3Output(database, "SELECT count(*) FROM t;") == "0\n")
    }

    @Test("UTF-8 text, CRLF line ends and a missing last newline reach SQLite exactly as written")
    func utf8IsKept() async throws {
        let (directory, database) = try await database()
        let input = Data("INSERT INTO t VALUES ('café ☕ 𝄞');\r\nSELECT hex(x) FROM t".utf8)
        let output = try await Processes.sqlive([database], input: input, directory: directory)
        #expect(output.stdout == Array("café ☕ 𝄞".utf8).map { String(format: "%02X", $0) }.joined() + "\n")
        #expect(output.status == 0)
    }

    @Test("A -c argument that is not UTF-8 is refused before anything runs")
    func latin1Argument() async throws {
        let (directory, database) = try await database()
        // The shell's printf makes the byte 0xE9; Swift's strings cannot hold it.
        let script = #"exec "$0" "$1" -c "$(printf "INSERT INTO t VALUES ('caf\351');")""#
        let (process, out, err) = try Processes.start(
            "/bin/sh", ["-c", script, Processes.sqlive, database], input: nil,
            environment: Processes.environment(directory: directory), directory: directory)
        #expect(await Processes.wait(process))
        #expect(await process.exit() != 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "")
        #expect(try String(contentsOfFile: err, encoding: .utf8).contains("argument 3 holds bytes that are not UTF-8"))
        #expect(try await Processes.sqlite3Output(database, "SELECT count(*) FROM t;") == "0\n")
    }
}

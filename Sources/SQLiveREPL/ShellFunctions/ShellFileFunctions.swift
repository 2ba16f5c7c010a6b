import Foundation
import GRDBSQLite
import SQLiveEngine
import Synchronization

/// The sqlite3 shell's file functions: `readfile(PATH)` (the file's bytes
/// as a blob, NULL when it cannot be opened), `writefile(PATH, DATA[, MODE[,
/// MTIME]])` (a file, a directory or a symbolic link, and the number of
/// bytes written), `lsmode(MODE)` (`ls -l`'s `-rw-r--r--`) and
/// `edit(TEXT[, EDITOR])`, which opens TEXT in `$VISUAL` (or EDITOR) and
/// returns what was saved.
///
/// The files are read and written with the C library's calls the shell
/// makes, in the same order, so that what a path can and cannot be gives
/// the same results and errors.
enum ShellFileFunctions {
    typealias F = ShellFunctions

    /// How many `edit()` editors run now: while one does, it owns the
    /// terminal, and the elapsed-time indicator (and the live changes it
    /// lets through) keeps quiet.
    static let editorsRunning = Atomic<Int>(0)

    static func register(on connection: OpaquePointer) {
        F.scalar(connection, "readfile", 1, F.utf8 | F.directOnly) { context, count, values in
            guard !ShellFileFunctions.refusedToClient(context, "readfile") else { return }
            guard let path = F.Arguments(values, count).cString(0) else { return }
            ShellFileFunctions.readFile(context, path)
        }
        F.scalar(connection, "writefile", -1, F.utf8 | F.directOnly) { context, count, values in
            guard !ShellFileFunctions.refusedToClient(context, "writefile") else { return }
            ShellFileFunctions.writeFile(context, F.Arguments(values, count))
        }
        F.scalar(connection, "lsmode", 1, F.utf8) { context, count, values in
            F.resultText(context, ShellFileFunctions.listingMode(Int(sqlite3_value_int(F.Arguments(values, count)[0]))))
        }
        for arguments: Int32 in [1, 2] {
            F.scalar(connection, "edit", arguments, F.utf8) { context, count, values in
                guard !ShellFileFunctions.refusedToClient(context, "edit") else { return }
                ShellFileFunctions.edit(context, F.Arguments(values, count))
            }
        }
    }

    /// A server's client (the page `.web` serves) never reaches a file or
    /// a program through the shell's functions: the engine's client guard
    /// refuses them as a client's statement is prepared, and this refuses
    /// them as they run, whoever prepared the statement. True when refused.
    private static func refusedToClient(_ context: OpaquePointer?, _ name: String) -> Bool {
        guard ClientGuard.isServingClient(sqlite3_context_db_handle(context)) else { return false }
        F.resultError(context, "\(name)() is the sqlite3 shell's: a server's clients may not call it")
        return true
    }

    // MARK: - readfile

    private static func readFile(_ context: OpaquePointer?, _ path: String) {
        // A missing or unreadable file is NULL.
        guard let file = fopen(path, "rb") else { return }
        defer { fclose(file) }
        fseek(file, 0, SEEK_END)
        let size = ftell(file)
        rewind(file)
        let limit = sqlite3_limit(sqlite3_context_db_handle(context), SQLITE_LIMIT_LENGTH, -1)
        if size > Int(limit) {
            sqlite3_result_error_code(context, SQLITE_TOOBIG)
            return
        }
        var bytes = [UInt8](repeating: 0, count: max(size, 0))
        let read = bytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        guard read == bytes.count else {
            sqlite3_result_error_code(context, SQLITE_IOERR)
            return
        }
        F.resultBlob(context, bytes)
    }

    // MARK: - writefile

    private static func writeFile(_ context: OpaquePointer?, _ arguments: F.Arguments) {
        guard (2...4).contains(arguments.count) else {
            F.resultError(context, "wrong number of arguments to function writefile()")
            return
        }
        guard let path = arguments.cString(0) else { return }
        let mode = arguments.count >= 3 ? mode_t(truncatingIfNeeded: sqlite3_value_int(arguments[2])) : 0
        let modificationTime = arguments.count == 4 ? sqlite3_value_int64(arguments[3]) : -1
        var outcome = write(context, path: path, data: arguments[1], mode: mode, modificationTime: modificationTime)
        if outcome.status == 1 && outcome.error == ENOENT && makeDirectories(for: path) {
            outcome = write(context, path: path, data: arguments[1], mode: mode, modificationTime: modificationTime)
        }
        guard arguments.count > 2 && outcome.status != 0 else { return }
        let what =
            switch mode & S_IFMT {
            case S_IFLNK: "symlink"
            case S_IFDIR: "directory"
            default: "file"
            }
        F.resultError(context, "failed to \(what == "file" ? "write" : "create") \(what): \(path)")
    }

    /// Writes one file, directory or link: status 0 when done, 1 when a
    /// call failed (with its errno), 2 when the data or the mode could not
    /// be written.
    private static func write(
        _ context: OpaquePointer?, path: String, data: OpaquePointer?, mode: mode_t, modificationTime: Int64
    ) -> (status: Int, error: Int32) {
        if mode & S_IFMT == S_IFLNK {
            guard let target = sqlite3_value_text(data) else { return (1, errno) }
            if symlink(target, path) < 0 { return (1, errno) }
        } else if mode & S_IFMT == S_IFDIR {
            if mkdir(path, mode) != 0 {
                let error = errno
                var status = stat()
                if error != EEXIST { return (1, error) }
                if stat(path, &status) != 0 { return (1, errno) }
                if status.st_mode & S_IFMT != S_IFDIR { return (1, errno) }
                if status.st_mode & 0o777 != mode & 0o777 && chmod(path, mode & 0o777) != 0 { return (1, errno) }
            }
        } else {
            guard let file = fopen(path, "wb") else { return (1, errno) }
            var failed = false
            var written: Int64 = 0
            if let bytes = sqlite3_value_blob(data) {
                let count = Int(sqlite3_value_bytes(data))
                failed = fwrite(bytes, 1, count, file) != count
                written = Int64(count)
            }
            fclose(file)
            if !failed && mode != 0 && chmod(path, mode & 0o777) != 0 { failed = true }
            if failed { return (2, errno) }
            sqlite3_result_int64(context, written)
        }
        if modificationTime >= 0 {
            var times = [
                timeval(tv_sec: time(nil), tv_usec: 0), timeval(tv_sec: Int(modificationTime), tv_usec: 0),
            ]
            if utimes(path, &times) != 0 { return (1, errno) }
        }
        return (0, 0)
    }

    /// Makes the directories above `path` that are missing (mode 0777 less
    /// the umask); false when one cannot be made or is not a directory.
    private static func makeDirectories(for path: String) -> Bool {
        let bytes = Array(path.utf8)
        var index = 1
        while index < bytes.count {
            while index < bytes.count && bytes[index] != UInt8(ascii: "/") { index += 1 }
            if index == bytes.count { break }
            let prefix = String(decoding: bytes[..<index], as: UTF8.self)
            var status = stat()
            if stat(prefix, &status) != 0 {
                if mkdir(prefix, 0o777) != 0 { return false }
            } else if status.st_mode & S_IFMT != S_IFDIR {
                return false
            }
            index += 1
        }
        return true
    }

    // MARK: - lsmode

    /// `ls -l`'s type and permissions: `drwxr-xr-x`.
    static func listingMode(_ mode: Int) -> String {
        let type: Character =
            switch mode_t(truncatingIfNeeded: mode) & S_IFMT {
            case S_IFLNK: "l"
            case S_IFREG: "-"
            case S_IFDIR: "d"
            default: "?"
            }
        var text = String(type)
        for shift in [6, 3, 0] {
            let bits = mode >> shift
            text += (bits & 4 != 0 ? "r" : "-") + (bits & 2 != 0 ? "w" : "-") + (bits & 1 != 0 ? "x" : "-")
        }
        return text
    }

    // MARK: - edit

    /// `edit(TEXT[, EDITOR])`: writes TEXT to a temporary file, runs the
    /// editor on it (`$VISUAL` without EDITOR) through the shell, and
    /// returns the file as it was saved: a blob for a blob, else text
    /// (CRLF turned back into LF unless TEXT held CRLF).
    private static func edit(_ context: OpaquePointer?, _ arguments: F.Arguments) {
        let editor: String? =
            arguments.count == 2 ? arguments.cString(1) : ProcessInfo.processInfo.environment["VISUAL"]
        guard let editor else {
            F.resultError(context, "no editor for edit()")
            return
        }
        guard arguments.type(0) != SQLITE_NULL else {
            F.resultError(context, "NULL input to edit()")
            return
        }
        let binary = arguments.type(0) == SQLITE_BLOB
        let input = binary ? arguments.blob(0) : (arguments.text(0) ?? [])
        let path = temporaryPath(sqlite3_context_db_handle(context))
        defer { unlink(path) }
        guard let file = fopen(path, binary ? "wb" : "w") else {
            F.resultError(context, "edit() cannot open temp file")
            return
        }
        let written = input.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
        guard written == input.count else {
            F.resultError(context, "edit() could not write the whole file")
            return
        }
        editorsRunning.add(1, ordering: .sequentiallyConsistent)
        let status = runShell("\(editor) \"\(path)\"")
        editorsRunning.subtract(1, ordering: .sequentiallyConsistent)
        guard status == 0 else {
            F.resultError(context, "EDITOR returned non-zero")
            return
        }
        guard let edited = FileManager.default.contents(atPath: path) else {
            F.resultError(context, "edit() cannot reopen temp file after edit")
            return
        }
        var output = [UInt8](edited)
        if binary {
            F.resultBlob(context, output)
            return
        }
        // Whether the text, as C reads it (to its first NUL), held a CRLF.
        let heldCRLF = input.prefix { $0 != 0 }.holds([0x0D, 0x0A])
        if !heldCRLF {
            var kept: [UInt8] = []
            kept.reserveCapacity(output.count)
            var index = 0
            while index < output.count {
                if output[index] == 0x0D && index + 1 < output.count && output[index + 1] == 0x0A { index += 1 }
                kept.append(output[index])
                index += 1
            }
            output = kept
        }
        F.resultText(context, output)
    }

    /// A temporary file's name from the database's VFS, as the shell asks
    /// for one; else `tempXXXX` in the current directory.
    private static func temporaryPath(_ connection: OpaquePointer?) -> String {
        var name: UnsafeMutablePointer<CChar>?
        _ = withUnsafeMutablePointer(to: &name) {
            sqlite3_file_control(connection, nil, SQLITE_FCNTL_TEMPFILENAME, $0)
        }
        if let name {
            defer { sqlite3_free(name) }
            return String(cString: name)
        }
        return "temp" + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    /// Runs a command line with `/bin/sh -c`, as `system(3)` does; returns its wait status.
    private static func runShell(_ command: String) -> Int32 {
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for argument in arguments { free(argument) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ) == 0 else { return 127 << 8 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

extension ArraySlice where Element == UInt8 {
    /// Whether the bytes hold `pattern` somewhere.
    fileprivate func holds(_ pattern: [UInt8]) -> Bool {
        guard count >= pattern.count else { return false }
        return (startIndex...(endIndex - pattern.count)).contains {
            self[$0..<($0 + pattern.count)].elementsEqual(pattern)
        }
    }
}

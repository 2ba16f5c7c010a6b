import GRDBSQLite

/// The SQL functions the sqlite3 3.40.1 shell registers on its own
/// connection, registered on the REPL session's connection only (never on
/// a live query's, the checker's or a server's): `readfile`, `writefile`,
/// `lsmode`, `edit`, the `ieee754` family, the `decimal` family with its
/// aggregate `decimal_sum` and collation `decimal`, `sha3` and `sha3_query`.
///
/// Each gives the shell's results, its quirks and its error messages
/// included, written for sqlive in Swift over SQLite's C API; each is
/// registered with the shell's flags (`SQLITE_INNOCUOUS`, `SQLITE_DETERMINISTIC`,
/// `SQLITE_DIRECTONLY`), so it is allowed in the same places.
enum ShellFunctions {
    /// Registers every function on `connection`.
    static func register(on connection: OpaquePointer) {
        ShellNumberFunctions.register(on: connection)
        ShellFileFunctions.register(on: connection)
        ShellHashFunctions.register(on: connection)
    }

    /// A scalar function's C entry point.
    typealias Scalar = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void

    static let utf8 = SQLITE_UTF8
    static let innocuous = SQLITE_INNOCUOUS
    static let deterministic = SQLITE_DETERMINISTIC
    static let directOnly = SQLITE_DIRECTONLY

    /// Registers a scalar function.
    static func scalar(_ connection: OpaquePointer, _ name: String, _ arguments: Int32, _ flags: Int32, _ body: Scalar)
    {
        sqlite3_create_function_v2(connection, name, arguments, flags, nil, body, nil, nil, nil)
    }

    /// SQLite copies what it is given.
    static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    /// The arguments of a call.
    struct Arguments {
        let values: UnsafeMutablePointer<OpaquePointer?>
        let count: Int

        init(_ values: UnsafeMutablePointer<OpaquePointer?>?, _ count: Int32) {
            self.values = values ?? UnsafeMutablePointer(bitPattern: 8)!
            self.count = Int(count)
        }

        subscript(index: Int) -> OpaquePointer? { values[index] }

        func type(_ index: Int) -> Int32 { sqlite3_value_type(values[index]) }

        /// The value as text (SQLite's conversion), its bytes without the
        /// terminator; `nil` for NULL.
        func text(_ index: Int) -> [UInt8]? {
            guard let pointer = sqlite3_value_text(values[index]) else { return nil }
            let count = Int(sqlite3_value_bytes(values[index]))
            return Array(UnsafeBufferPointer(start: pointer, count: count))
        }

        /// The value as a C string, up to its first NUL, as C code reads it; `nil` for NULL.
        func cString(_ index: Int) -> String? {
            guard let pointer = sqlite3_value_text(values[index]) else { return nil }
            return String(cString: pointer)
        }

        /// A blob's bytes (empty for an empty blob).
        func blob(_ index: Int) -> [UInt8] {
            let count = Int(sqlite3_value_bytes(values[index]))
            guard let pointer = sqlite3_value_blob(values[index]), count > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: pointer, count: count))
        }
    }

    static func resultText(_ context: OpaquePointer?, _ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            // A text of no bytes needs a pointer all the same (NULL would make NULL).
            let start =
                buffer.baseAddress.map(UnsafeRawPointer.init) ?? UnsafeRawPointer(("" as StaticString).utf8Start)
            sqlite3_result_text64(
                context, start.assumingMemoryBound(to: CChar.self), sqlite3_uint64(buffer.count), transient,
                UInt8(SQLITE_UTF8))
        }
    }

    static func resultText(_ context: OpaquePointer?, _ text: String) {
        resultText(context, Array(text.utf8))
    }

    static func resultBlob(_ context: OpaquePointer?, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            let start = buffer.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
            sqlite3_result_blob64(context, start, sqlite3_uint64(buffer.count), transient)
        }
    }

    static func resultError(_ context: OpaquePointer?, _ message: String) {
        sqlite3_result_error(context, message, -1)
    }
}

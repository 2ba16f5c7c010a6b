import Foundation
import GRDBSQLite

/// The sqlite3 shell's hashes: `sha3(X[, SIZE])`, the SHA3 hash of a
/// value (a blob's bytes, anything else's text), and `sha3_query(SQL[,
/// SIZE])`, the hash of what the statements of SQL return, in the shell's
/// encoding of statements, rows and values. SIZE is 224, 256 (the default),
/// 384 or 512.
enum ShellHashFunctions {
    typealias F = ShellFunctions

    static func register(on connection: OpaquePointer) {
        for arguments: Int32 in [1, 2] {
            F.scalar(connection, "sha3", arguments, F.utf8 | F.innocuous | F.deterministic) { context, count, values in
                let arguments = F.Arguments(values, count)
                let type = arguments.type(0)
                guard let size = ShellHashFunctions.size(context, arguments) else { return }
                guard type != SQLITE_NULL else { return }
                var hash = SHA3(bits: size)
                hash.update(type == SQLITE_BLOB ? arguments.blob(0) : (arguments.text(0) ?? []))
                F.resultBlob(context, hash.finish())
            }
            F.scalar(connection, "sha3_query", arguments, F.utf8 | F.directOnly) { context, count, values in
                ShellHashFunctions.hashQuery(context, F.Arguments(values, count))
            }
        }
    }

    /// The size asked for; `nil` after reporting a wrong one.
    private static func size(_ context: OpaquePointer?, _ arguments: F.Arguments) -> Int? {
        guard arguments.count == 2 else { return 256 }
        let size = Int(sqlite3_value_int(arguments[1]))
        guard [224, 256, 384, 512].contains(size) else {
            F.resultError(context, "SHA3 size should be one of: 224 256 384 512")
            return nil
        }
        return size
    }

    /// `sha3_query`: runs each statement (read-only ones only) on the
    /// calling connection and hashes `S<length>:<sql>`, then for each row
    /// `R` and each value `N`, `I` and 8 bytes, `F` and 8 bytes,
    /// `T<length>:<text>` or `B<length>:<bytes>` (numbers big-endian).
    private static func hashQuery(_ context: OpaquePointer?, _ arguments: F.Arguments) {
        let connection = sqlite3_context_db_handle(context)
        guard let size = size(context, arguments) else { return }
        guard var sql = sqlite3_value_text(arguments[0]) else { return }
        var hash = SHA3(bits: size)
        while sql.pointee != 0 {
            var statement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let code = sql.withMemoryRebound(to: CChar.self, capacity: 1) {
                sqlite3_prepare_v2(connection, $0, -1, &statement, &tail)
            }
            let rest = tail.map { String(cString: $0) } ?? ""
            if code != SQLITE_OK {
                let message = String(cString: sqlite3_errmsg(connection))
                sqlite3_finalize(statement)
                F.resultError(context, "error SQL statement [\(rest)]: \(message)")
                return
            }
            defer { sqlite3_finalize(statement) }
            if sqlite3_stmt_readonly(statement) == 0 {
                let text = sqlite3_sql(statement).map { String(cString: $0) } ?? ""
                F.resultError(context, "non-query: [\(text)]")
                return
            }
            let columns = sqlite3_column_count(statement)
            if let text = sqlite3_sql(statement) {
                let bytes = Array(UnsafeBufferPointer(start: text, count: strlen(text))).map { UInt8(bitPattern: $0) }
                hash.update(Array("S\(bytes.count):".utf8))
                hash.update(bytes)
            }
            // Nothing but spaces or comments left: no statement, no rows.
            while statement != nil && sqlite3_step(statement) == SQLITE_ROW {
                hash.update([UInt8(ascii: "R")])
                for column in 0..<columns {
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_NULL:
                        hash.update([UInt8(ascii: "N")])
                    case SQLITE_INTEGER:
                        hash.update(bigEndian("I", UInt64(bitPattern: sqlite3_column_int64(statement, column))))
                    case SQLITE_FLOAT:
                        hash.update(bigEndian("F", sqlite3_column_double(statement, column).bitPattern))
                    case SQLITE_TEXT:
                        let start = sqlite3_column_text(statement, column)
                        let count = Int(sqlite3_column_bytes(statement, column))
                        hash.update(Array("T\(count):".utf8))
                        if let start { hash.update(UnsafeBufferPointer(start: start, count: count)) }
                    default:
                        let start = sqlite3_column_blob(statement, column)
                        let count = Int(sqlite3_column_bytes(statement, column))
                        hash.update(Array("B\(count):".utf8))
                        if let start { hash.update(UnsafeRawBufferPointer(start: start, count: count)) }
                    }
                }
            }
            guard let tail else { break }
            sql = UnsafeRawPointer(tail).assumingMemoryBound(to: UInt8.self)
        }
        F.resultBlob(context, hash.finish())
    }

    private static func bigEndian(_ tag: Character, _ bits: UInt64) -> [UInt8] {
        [UInt8(ascii: tag.unicodeScalars.first!)] + (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * $0)) }
    }
}

/// SHA3 (FIPS 202) of 224, 256, 384 or 512 bits, as the shell's extension
/// computes it (any other size is taken as 256).
///
/// ```swift
/// var hash = SHA3(bits: 256)
/// hash.update(Array("abc".utf8))
/// hash.finish()   // 3a985da74fe225b2 …
/// ```
struct SHA3 {
    private var state = [UInt64](repeating: 0, count: 25)
    /// Bytes absorbed per permutation.
    private let rate: Int
    private let bits: Int
    private var loaded = 0

    init(bits: Int) {
        self.bits = (128...512).contains(bits) ? bits : 256
        rate = (1600 - ((self.bits + 31) & ~31) * 2) / 8
    }

    mutating func update(_ bytes: some Sequence<UInt8>) {
        for byte in bytes { absorb(byte) }
    }

    private mutating func absorb(_ byte: UInt8) {
        state[loaded >> 3] ^= UInt64(byte) << (8 * UInt64(loaded & 7))
        loaded += 1
        if loaded == rate {
            permute()
            loaded = 0
        }
    }

    /// The hash: `bits / 8` bytes.
    mutating func finish() -> [UInt8] {
        if loaded == rate - 1 {
            absorb(0x86)
        } else {
            absorb(0x06)
            loaded = rate - 1
            absorb(0x80)
        }
        return (0..<(bits / 8)).map { UInt8(truncatingIfNeeded: state[$0 >> 3] >> (8 * UInt64($0 & 7))) }
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]
    /// ρ's rotations, in π's order of lanes.
    private static let rotations: [UInt64] = [
        1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14, 27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44,
    ]
    private static let lanes = [10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4, 15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1]

    /// Keccak-f[1600]: 24 rounds of θ, ρ and π, χ, ι over lanes `x + 5y`.
    private mutating func permute() {
        state.withUnsafeMutableBufferPointer { lane in
            var columns = [UInt64](repeating: 0, count: 5)
            for round in 0..<24 {
                for x in 0..<5 { columns[x] = lane[x] ^ lane[x + 5] ^ lane[x + 10] ^ lane[x + 15] ^ lane[x + 20] }
                for x in 0..<5 {
                    let d = columns[(x + 4) % 5] ^ Self.rotate(columns[(x + 1) % 5], 1)
                    for y in stride(from: 0, to: 25, by: 5) { lane[y + x] ^= d }
                }
                var carried = lane[1]
                for index in 0..<24 {
                    let target = Self.lanes[index]
                    let next = lane[target]
                    lane[target] = Self.rotate(carried, Self.rotations[index])
                    carried = next
                }
                for y in stride(from: 0, to: 25, by: 5) {
                    for x in 0..<5 { columns[x] = lane[y + x] }
                    for x in 0..<5 { lane[y + x] ^= ~columns[(x + 1) % 5] & columns[(x + 2) % 5] }
                }
                lane[0] ^= Self.roundConstants[round]
            }
        }
    }

    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        value << count | value >> (64 - count)
    }
}

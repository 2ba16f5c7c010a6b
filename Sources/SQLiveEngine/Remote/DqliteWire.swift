import Foundation

/// dqlite's wire protocol (version 1), the client's side: messages as
/// bytes, and bytes as responses. Pure values, no socket
/// (`DqliteConnection` carries them). The layouts, checked against
/// Debian's libdqlite 1.11.1, are in docs/research/dqlite-wire.md.
///
/// A message is an 8-byte header — the body's length in 8-byte words
/// (u32), the type (u8), a schema byte (0), two unused bytes — and a body
/// of whole words, little-endian throughout.
enum DqliteWire {
    /// The word a client sends first.
    static let protocolVersion: UInt64 = 1

    enum Request: UInt8 {
        case leader = 0
        case client = 1
        case open = 3
        case execSQL = 8
        case querySQL = 9
        case dump = 15
        case cluster = 16
    }

    enum Response: UInt8 {
        case failure = 0
        case server = 1
        case welcome = 2
        case servers = 3
        case db = 4
        case stmt = 5
        case result = 6
        case rows = 7
        case empty = 8
        case files = 9
        case metadata = 10
    }

    /// The end of a result set's last batch, and of a batch with more to come.
    static let rowsDone: UInt64 = 0xFFFF_FFFF_FFFF_FFFF
    static let rowsPart: UInt64 = 0xEEEE_EEEE_EEEE_EEEE

    /// dqlite's "not leader" (SQLite's extended codes otherwise): the
    /// statement did not run there.
    static let notLeader: UInt64 = 10250

    // MARK: - Writing

    /// A message's body, word by word.
    struct Body {
        private(set) var bytes: [UInt8] = []

        mutating func uint64(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func int64(_ value: Int64) { uint64(UInt64(bitPattern: value)) }

        mutating func uint32(_ value: UInt32) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        /// UTF-8, a NUL, zeros to the next word.
        mutating func text(_ value: String) {
            bytes.append(contentsOf: value.utf8)
            bytes.append(0)
            pad()
        }

        mutating func blob(_ value: some Collection<UInt8>) {
            uint64(UInt64(value.count))
            bytes.append(contentsOf: value)
            pad()
        }

        mutating func pad() {
            while bytes.count % 8 != 0 { bytes.append(0) }
        }

        /// A statement's parameters: a count byte, a type byte each, zeros
        /// to the word, then the values; nothing at all for none (the
        /// server binds nothing when the body ends).
        mutating func parameters(_ values: [SQLValue]) throws(SQLiveError) {
            guard !values.isEmpty else { return }
            guard values.count <= 255 else {
                throw .remote("dqlite takes at most 255 parameters per statement, not \(values.count)")
            }
            bytes.append(UInt8(values.count))
            for value in values {
                let type: UInt8 =
                    switch value {
                    case .integer: 1
                    case .real: 2
                    case .text: 3
                    case .blob: 4
                    case .null: 5
                    }
                bytes.append(type)
            }
            pad()
            for value in values {
                switch value {
                case .integer(let integer): int64(integer)
                case .real(let real): uint64(real.bitPattern)
                case .text(let text): self.text(text)
                case .blob(let data): blob(data)
                case .null: uint64(0)
                }
            }
        }
    }

    /// A whole message: header and body.
    static func message(_ type: Request, _ body: Body) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(8 + body.bytes.count)
        let words = UInt32(body.bytes.count / 8)
        withUnsafeBytes(of: words.littleEndian) { message.append(contentsOf: $0) }
        message += [type.rawValue, 0, 0, 0]
        message += body.bytes
        return message
    }

    static func leader() -> [UInt8] {
        var body = Body()
        body.uint64(0)
        return message(.leader, body)
    }

    static func client() -> [UInt8] {
        var body = Body()
        body.uint64(0)
        return message(.client, body)
    }

    static func open(_ name: String) -> [UInt8] {
        var body = Body()
        body.text(name)
        body.uint64(0)
        body.text("volatile")
        return message(.open, body)
    }

    /// EXEC_SQL or QUERY_SQL: the database, the SQL, its parameters.
    static func sql(_ type: Request, database: UInt32, _ sql: String, _ parameters: [SQLValue]) throws(SQLiveError)
        -> [UInt8]
    {
        var body = Body()
        body.uint64(UInt64(database))
        body.text(sql)
        try body.parameters(parameters)
        return message(type, body)
    }

    static func dump(_ name: String) -> [UInt8] {
        var body = Body()
        body.text(name)
        return message(.dump, body)
    }

    static func cluster() -> [UInt8] {
        var body = Body()
        body.uint64(1)
        return message(.cluster, body)
    }

    // MARK: - Reading

    /// Reads a response's body, word by word; every read is checked
    /// against the body's end (a short or garbled message is an error, not
    /// a crash).
    struct Reader {
        let bytes: [UInt8]
        private(set) var offset = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var atEnd: Bool { offset >= bytes.count }

        mutating func uint64() throws(SQLiveError) -> UInt64 {
            guard offset + 8 <= bytes.count else { throw .remote("a dqlite message ended early") }
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            offset += 8
            return value
        }

        mutating func int64() throws(SQLiveError) -> Int64 { Int64(bitPattern: try uint64()) }

        mutating func uint32() throws(SQLiveError) -> UInt32 {
            guard offset + 4 <= bytes.count else { throw .remote("a dqlite message ended early") }
            var value: UInt32 = 0
            for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
            offset += 4
            return value
        }

        /// The next word, not consumed.
        func peekUInt64() throws(SQLiveError) -> UInt64 {
            var copy = self
            return try copy.uint64()
        }

        mutating func text() throws(SQLiveError) -> String {
            guard let end = bytes[offset...].firstIndex(of: 0) else {
                throw .remote("a dqlite message holds text with no end")
            }
            let text = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = (end + 1 + 7) / 8 * 8
            return text
        }

        mutating func raw(_ count: Int) throws(SQLiveError) -> ArraySlice<UInt8> {
            guard count >= 0, offset + count <= bytes.count else { throw .remote("a dqlite message ended early") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func blob() throws(SQLiveError) -> Data {
            let count = try uint64()
            guard count <= UInt64(bytes.count) else { throw .remote("a dqlite message ended early") }
            let data = Data(try raw(Int(count)))
            offset = (offset + 7) / 8 * 8
            return data
        }
    }

    /// A FAILURE response: its code (SQLite's extended, or dqlite's) and message.
    struct Failure: Error, Hashable {
        var code: UInt64
        var message: String
    }

    static func failure(_ body: [UInt8]) -> Failure {
        var reader = Reader(body)
        let code = (try? reader.uint64()) ?? 1
        let message = (try? reader.text()) ?? "dqlite failed"
        return Failure(code: code, message: message)
    }

    /// One batch of a result set: the column names, the rows, and whether
    /// more batches follow.
    struct RowBatch {
        var columns: [String]
        var rows: [[SQLValue]]
        var more: Bool
    }

    /// Decodes a ROWS message. Each row's types come first, four bits a
    /// column; dqlite's date and boolean types read as what SQLite holds
    /// (UNIXTIME and BOOLEAN as integers, ISO8601 as text).
    static func rows(_ body: [UInt8]) throws(SQLiveError) -> RowBatch {
        var reader = Reader(body)
        let count = try reader.uint64()
        guard count <= 32_767 else { throw .remote("a dqlite result with \(count) columns") }
        var columns: [String] = []
        for _ in 0..<count { columns.append(try reader.text()) }
        var rows: [[SQLValue]] = []
        while true {
            let next = try reader.peekUInt64()
            if next == rowsDone || next == rowsPart {
                _ = try reader.uint64()
                return RowBatch(columns: columns, rows: rows, more: next == rowsPart)
            }
            let header = try reader.raw((Int(count) + 1) / 2)
            reader = try skipPadding(reader)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(count))
            for column in 0..<Int(count) {
                let byte = header[header.startIndex + column / 2]
                let type = column % 2 == 0 ? byte & 0x0F : byte >> 4
                switch type {
                case 1, 9, 11: row.append(.integer(try reader.int64()))
                case 2: row.append(.real(Double(bitPattern: try reader.uint64())))
                case 3, 10: row.append(.text(try reader.text()))
                case 4: row.append(.blob(try reader.blob()))
                case 5:
                    _ = try reader.uint64()
                    row.append(.null)
                default: throw .remote("a dqlite row holds a value of unknown type \(type)")
                }
            }
            rows.append(row)
        }
    }

    private static func skipPadding(_ reader: Reader) throws(SQLiveError) -> Reader {
        var reader = reader
        let misaligned = reader.offset % 8
        if misaligned != 0 { _ = try reader.raw(8 - misaligned) }
        return reader
    }

    /// A FILES message: each file's name and bytes (a database's main file
    /// and its WAL).
    static func files(_ body: [UInt8]) throws(SQLiveError) -> [(name: String, bytes: ArraySlice<UInt8>)] {
        var reader = Reader(body)
        let count = try reader.uint64()
        guard count <= 16 else { throw .remote("a dqlite dump of \(count) files") }
        var files: [(name: String, bytes: ArraySlice<UInt8>)] = []
        for _ in 0..<count {
            let name = try reader.text()
            let size = try reader.uint64()
            guard size <= UInt64(body.count) else { throw .remote("a dqlite dump ended early") }
            files.append((name, try reader.raw(Int(size))))
        }
        return files
    }

    /// A SERVERS message: each node's id and address.
    static func servers(_ body: [UInt8]) throws(SQLiveError) -> [(id: UInt64, address: String)] {
        var reader = Reader(body)
        let count = try reader.uint64()
        guard count <= 1024 else { throw .remote("a dqlite cluster of \(count) nodes") }
        var servers: [(id: UInt64, address: String)] = []
        for _ in 0..<count {
            let id = try reader.uint64()
            let address = try reader.text()
            _ = try reader.uint64()  // the role (format 1)
            servers.append((id, address))
        }
        return servers
    }
}

import Foundation

/// SQLite's record format (fileformat2 §2.1): a header of serial types,
/// then the values. What a b-tree cell's payload holds: a table row, or an
/// index entry (a `WITHOUT ROWID` table's rows are index entries).
enum SQLiteRecord {
    /// How text is stored (the database's `PRAGMA encoding`).
    enum TextEncoding: Sendable {
        case utf8, utf16le, utf16be
    }

    /// The values of a record, in order; `nil` when the bytes are not a
    /// well-formed record.
    static func values(_ record: UnsafeRawBufferPointer, encoding: TextEncoding = .utf8) -> [SQLValue]? {
        guard let (headerSize, headerLength) = BTreePage.varint(record, at: 0, limit: record.count),
            headerSize >= UInt64(headerLength), headerSize <= UInt64(record.count)
        else { return nil }
        var values: [SQLValue] = []
        var typeOffset = headerLength
        var bodyOffset = Int(headerSize)
        while typeOffset < Int(headerSize) {
            guard let (serial, length) = BTreePage.varint(record, at: typeOffset, limit: Int(headerSize)) else {
                return nil
            }
            typeOffset += length
            let size = Self.size(of: serial)
            guard bodyOffset + size <= record.count else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: record[bodyOffset..<(bodyOffset + size)])
            bodyOffset += size
            switch serial {
            case 0: values.append(.null)
            case 1...6: values.append(.integer(Self.integer(body)))
            case 7:
                let bits = UInt64(bitPattern: Self.integer(body))
                values.append(.real(Double(bitPattern: bits)))
            case 8: values.append(.integer(0))
            case 9: values.append(.integer(1))
            case 10, 11: return nil
            default:
                if serial % 2 == 0 {
                    values.append(.blob(Data(body)))
                } else {
                    values.append(.text(Self.text(body, encoding: encoding)))
                }
            }
        }
        return values
    }

    /// The bytes a serial type's value takes in the body.
    static func size(of serial: UInt64) -> Int {
        switch serial {
        case 0, 8, 9, 10, 11: 0
        case 1: 1
        case 2: 2
        case 3: 3
        case 4: 4
        case 5: 6
        case 6, 7: 8
        default: Int(clamping: (serial - 12) / 2)
        }
    }

    /// A big-endian two's-complement integer of 1 to 8 bytes.
    private static func integer(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        guard let first = bytes.first else { return 0 }
        var value = Int64(Int8(bitPattern: first))
        for byte in bytes.dropFirst() { value = value << 8 | Int64(byte) }
        return value
    }

    private static func text(_ bytes: UnsafeRawBufferPointer, encoding: TextEncoding) -> String {
        switch encoding {
        case .utf8:
            return String(decoding: bytes, as: UTF8.self)
        case .utf16le, .utf16be:
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var index = 0
            while index + 1 < bytes.count {
                let (a, b) = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
                units.append(encoding == .utf16le ? a | b << 8 : a << 8 | b)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
    }
}

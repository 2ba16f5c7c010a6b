import SQLiveEngine

/// Writes sqlite3's explain layout: columns 4, 13, 4, 4, 4, 13, 2 and 13
/// characters wide (wider when a value is), at most 8 columns, the header
/// and its dashes always. Used for `EXPLAIN …` statements (`.explain
/// auto`, the default) and for every statement after `.explain on`.
///
/// For an `EXPLAIN` program (its SQL starts with `EXPLAIN`, its columns
/// are `addr`, `opcode`, … `comment`), the opcodes inside loops are
/// indented by two spaces per loop, as sqlite3 indents them; the rows are
/// then held until the statement ends.
struct ExplainRenderer: RowRenderer {
    static let widths = [4, 13, 4, 4, 4, 13, 2, 13]
    static let programColumns = ["addr", "opcode", "p1", "p2", "p3", "p4", "p5", "comment"]

    let settings: RenderSettings
    /// Whether the statement's SQL starts with `EXPLAIN`.
    let explainStatement: Bool
    private var columns: [String] = []
    private var indenting = false
    /// The rows of an `EXPLAIN` program, until `end`.
    private var program: [[SQLValue]] = []
    private var rowCount = 0

    init(settings: RenderSettings, explainStatement: Bool = false) {
        self.settings = settings
        self.explainStatement = explainStatement
    }

    /// Whether SQL is an `EXPLAIN` statement but not `EXPLAIN QUERY PLAN`.
    static func isExplain(_ sql: String) -> Bool {
        let words = sql.split(maxSplits: 2, whereSeparator: { " \t\n\r\u{0C}".contains($0) })
        guard let first = words.first, first.count >= 7,
            first.prefix(7).lowercased() == "explain"
        else { return false }
        if first.count > 7 { return true }
        return words.count < 2 || words[1].lowercased() != "query"
    }

    mutating func begin(columns: [String], into output: inout OutputBuffer) {
        self.columns = Array(columns.prefix(8))
        indenting = explainStatement && columns == Self.programColumns
        program = []
        rowCount = 0
    }

    mutating func row(_ row: some RowValues, into output: inout OutputBuffer) {
        if indenting {
            program.append((0..<row.count).map { row.value(at: $0) })
        } else {
            write(row, indent: 0, into: &output)
        }
    }

    mutating func end(into output: inout OutputBuffer) {
        guard indenting, !program.isEmpty else { return }
        let indents = Self.indents(program)
        for (index, row) in program.enumerated() { write(row, indent: indents[index], into: &output) }
        program = []
    }

    private mutating func write(_ row: some RowValues, indent: Int, into output: inout OutputBuffer) {
        let count = columns.count
        if rowCount == 0 {
            for (index, name) in columns.enumerated() {
                Self.pad(Array(name.utf8), to: Self.widths[index], into: &output)
                output.append(index == count - 1 ? "\n" : "  ")
            }
            for index in 0..<count {
                output.append(repeating: UInt8(ascii: "-"), count: Self.widths[index])
                output.append(index == count - 1 ? "\n" : "  ")
            }
        }
        rowCount += 1
        for index in 0..<min(count, row.count) {
            if index == 1 { output.append(repeating: 0x20, count: indent) }
            let text = SQLiteText.withText(row, at: index) { $0.map { Array($0) } } ?? Array(settings.nullText.utf8)
            Self.pad(text, to: index == count - 1 ? 0 : Self.widths[index], into: &output)
            output.append(index == count - 1 ? "\n" : "  ")
        }
    }

    /// Text padded with spaces to `width` characters (never cut: the column grows).
    private static func pad(_ text: [UInt8], to width: Int, into output: inout OutputBuffer) {
        output.append(text)
        let characters = text.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        output.append(repeating: 0x20, count: width - characters)
    }

    /// Each opcode's indentation: two spaces for each loop it is in (from
    /// the jump target of a `Next`-like opcode, or of a `Goto` back to a
    /// `Yield`-like one, to the jump).
    static func indents(_ program: [[SQLValue]]) -> [Int] {
        func integer(_ value: SQLValue) -> Int {
            switch value {
            case .integer(let number): Int(truncatingIfNeeded: number)
            case .real(let number): number.isFinite ? Int(number) : 0
            case .text(let text): Int(text.prefix { $0.isNumber || $0 == "-" }) ?? 0
            default: 0
            }
        }
        let next: Set = ["Next", "Prev", "VPrev", "VNext", "SorterNext", "Return"]
        let yield: Set = ["Yield", "SeekLT", "SeekGT", "RowSetRead", "Rewind"]
        var indents = [Int](repeating: 0, count: program.count)
        var yields = [Bool](repeating: false, count: program.count)
        for (op, row) in program.enumerated() where row.count >= 4 {
            let opcode = if case .text(let name) = row[1] { name } else { "" }
            let target = integer(row[3]) + (op - integer(row[0]))
            yields[op] = yield.contains(opcode)
            if next.contains(opcode) && target > 0 {
                for index in target..<max(target, op) { indents[index] += 2 }
            }
            if opcode == "Goto" && target >= 0 && target <= op && (yields[target] || integer(row[2]) != 0) {
                for index in target..<max(target, op) { indents[index] += 2 }
            }
        }
        return indents
    }
}

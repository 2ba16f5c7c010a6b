/// A table of figures without an anchor column: one row per case of a
/// scenario (a journal mode and a writer, say), printed below the scenario's
/// metric table.
struct DetailTable {
    var columns: [String]
    /// Which columns hold numbers, right-aligned in Markdown.
    var numeric: Set<Int>
    var rows: [[String]] = []

    init(columns: [String], numericFrom firstNumeric: Int) {
        self.columns = columns
        self.numeric = Set(firstNumeric..<columns.count)
    }

    /// Adds a row; numbers are formatted as in the metric table.
    mutating func add(_ labels: [String], _ values: [Double]) {
        rows.append(labels + values.map(ResultTable.format))
    }

    /// The table in Markdown.
    var markdown: String {
        let alignment = columns.indices.map { numeric.contains($0) ? "---:" : "---" }
        var lines = ["| \(columns.joined(separator: " | ")) |", "|\(alignment.joined(separator: "|"))|"]
        lines += rows.map { "| \($0.joined(separator: " | ")) |" }
        return lines.joined(separator: "\n")
    }
}

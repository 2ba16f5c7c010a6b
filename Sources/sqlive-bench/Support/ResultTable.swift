import Foundation

/// One scenario's figures: each row a metric, sqlive's value, the anchor's, and their ratio.
struct ResultTable {
    struct Row {
        var metric: String
        var sqlive: Double
        var anchor: Double?
        var anchorName: String
        /// Whether a smaller value is better (latency) or a larger one (throughput).
        var lowerIsBetter = true
    }

    var scenario: String
    var note: String
    var rows: [Row] = []
    /// Per-case figures, printed after the metric rows.
    var details: DetailTable?
    var checks: [String] = []

    mutating func add(
        _ metric: String, _ sqlive: Double, anchor: Double? = nil, _ anchorName: String = "", lowerIsBetter: Bool = true
    ) {
        rows.append(
            Row(metric: metric, sqlive: sqlive, anchor: anchor, anchorName: anchorName, lowerIsBetter: lowerIsBetter))
    }

    /// The table in Markdown, as docs/benchmarks.md shows it.
    var markdown: String {
        var lines = ["### \(scenario)", "", note]
        if !rows.isEmpty {
            lines += [
                "", "| metric | sqlive | anchor | anchor value | ratio (sqlive / anchor) |", "|---|---:|---|---:|---:|",
            ]
        }
        for row in rows {
            let anchor = row.anchor.map(Self.format) ?? "–"
            let ratio = row.anchor.flatMap { $0 == 0 ? nil : row.sqlive / $0 }.map { String(format: "%.3f", $0) } ?? "–"
            lines.append("| \(row.metric) | \(Self.format(row.sqlive)) | \(row.anchorName) | \(anchor) | \(ratio) |")
        }
        if let details {
            lines += ["", details.markdown]
        }
        if !checks.isEmpty {
            lines.append("")
            lines += checks.map { "- check: \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        if value.isNaN { return "–" }
        if value == value.rounded() && abs(value) < 1e12 { return String(Int64(value)) }
        return String(format: abs(value) < 10 ? "%.3f" : "%.1f", value)
    }
}

/// A correctness check inside a benchmark failed: the run fails.
struct BenchmarkCheckFailed: Error, CustomStringConvertible {
    var description: String
}

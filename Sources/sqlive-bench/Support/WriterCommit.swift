/// One commit made by a writer process: the row it inserted and when.
///
/// Times are `Monotonic.now()` nanoseconds, one clock for all processes.
struct WriterCommit: Sendable {
    /// The id of the row the commit inserted.
    var id: Int64
    /// Just before the writer began the insert.
    var started: Int64
    /// Just after the writer's commit returned.
    var returned: Int64

    /// Parses the line `id started returned` that the GRDB and Python writers print after each commit.
    init?(line: Substring) {
        let fields = line.split(separator: " ").compactMap { Int64($0) }
        guard fields.count == 3 else { return nil }
        (id, started, returned) = (fields[0], fields[1], fields[2])
    }

    init(id: Int64, started: Int64, returned: Int64) {
        (self.id, self.started, self.returned) = (id, started, returned)
    }

    /// Parses a writer's whole output, one commit a line.
    static func parse(_ output: String) throws -> [WriterCommit] {
        let lines = output.split(separator: "\n")
        let commits = lines.compactMap(WriterCommit.init(line:))
        guard commits.count == lines.count else {
            throw BenchmarkCheckFailed(description: "unexpected writer output: \(output.prefix(500))")
        }
        return commits
    }
}

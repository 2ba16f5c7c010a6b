/// A writer's commits matched with their deliveries by row id: one case's latency figures.
///
/// Latency runs from the commit's return in the writer to the delivery. A
/// delivery may come before the return time was taken (the writer had not
/// yet read its clock, or the benchmark had not yet read the sqlite3 CLI's
/// answer): it counts as 0 and in `beforeReturn`.
struct DeliveryReport {
    /// Commit return → first delivery, clamped at 0, for delivered commits.
    var latency = Samples()
    /// How long the writer took to commit (insert started → commit returned).
    var commitTime = Samples()
    var commits = 0
    var delivered = 0
    var beforeReturn = 0
    /// Delivered only once the writer had begun its next commit, or more
    /// than `lateAfter` after its own return: a sign that the change went
    /// unnoticed until something else (the next commit, the safety poll)
    /// woke sqlive.
    var late = 0
    var missing: [Int64] = []

    init(commits: [WriterCommit], firstSeen: [Int64: Int64], lateAfter: Int64 = 500_000_000) {
        let commits = commits.sorted { $0.id < $1.id }
        self.commits = commits.count
        for (index, commit) in commits.enumerated() {
            commitTime.append(commit.returned - commit.started)
            guard let seen = firstSeen[commit.id] else {
                missing.append(commit.id)
                continue
            }
            delivered += 1
            let elapsed = seen - commit.returned
            if elapsed < 0 { beforeReturn += 1 }
            latency.append(Swift.max(0, elapsed))
            let next = index + 1 < commits.count ? commits[index + 1].started : Int64.max
            if seen >= next || elapsed > lateAfter { late += 1 }
        }
    }
}

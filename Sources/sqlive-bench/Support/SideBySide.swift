import Foundation

/// Runs two commands alternately, several times each, and keeps each
/// one's best wall time, then measures each one's own peak memory once.
struct SideBySide {
    var ours: (seconds: Double, peakMiB: Double) = (.infinity, .nan)
    var theirs: (seconds: Double, peakMiB: Double) = (.infinity, .nan)

    /// - parameter prepare: Runs before every run of either command (to
    ///   start from a fresh file, for instance).
    init(
        ours: [String], theirs: [String], input: String? = nil, runs: Int, prepare: () throws -> Void = {}
    ) throws {
        for _ in 0..<runs {
            try prepare()
            let a = try ChildProcess.time(ours, input: input)
            try prepare()
            let b = try ChildProcess.time(theirs, input: input)
            guard a.status == 0, b.status == 0 else {
                throw BenchmarkCheckFailed(
                    description: "a run failed (exit \(a.status) / \(b.status)): \(ours.joined(separator: " "))")
            }
            self.ours.seconds = min(self.ours.seconds, a.seconds)
            self.theirs.seconds = min(self.theirs.seconds, b.seconds)
        }
        try prepare()
        self.ours.peakMiB = try ChildProcess.peakMemory(ours, input: input) ?? .nan
        try prepare()
        self.theirs.peakMiB = try ChildProcess.peakMemory(theirs, input: input) ?? .nan
    }
}

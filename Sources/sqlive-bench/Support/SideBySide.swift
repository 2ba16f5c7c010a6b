import Foundation

/// Runs two commands alternately, several times each, and keeps each
/// one's best wall time, then measures each one's own peak memory once.
struct SideBySide {
    var ours: (seconds: Double, peakMiB: Double) = (.infinity, .nan)
    var theirs: (seconds: Double, peakMiB: Double) = (.infinity, .nan)
    /// The median run of each side (`seconds` holds the best).
    var medians: (ours: Double, theirs: Double) {
        (Self.median(oursRuns), Self.median(theirsRuns))
    }
    private var oursRuns: [Double] = []
    private var theirsRuns: [Double] = []

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

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
            oursRuns.append(a.seconds)
            theirsRuns.append(b.seconds)
        }
        try prepare()
        self.ours.peakMiB = try ChildProcess.peakMemory(ours, input: input) ?? .nan
        try prepare()
        self.theirs.peakMiB = try ChildProcess.peakMemory(theirs, input: input) ?? .nan
    }
}

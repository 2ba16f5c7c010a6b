/// Latency samples in nanoseconds, with percentiles in milliseconds.
struct Samples {
    private(set) var values: [Int64] = []

    mutating func append(_ value: Int64) { values.append(value) }
    var count: Int { values.count }

    /// The samples in a range of positions, in the order they were taken.
    func slice(_ range: Range<Int>) -> Samples {
        var part = Samples()
        part.values = Array(values[range])
        return part
    }

    /// The p-th percentile (nearest rank), in milliseconds.
    func percentile(_ p: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let rank = Swift.min(sorted.count - 1, Swift.max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1e6
    }

    var max: Double { values.max().map { Double($0) / 1e6 } ?? .nan }
    var mean: Double { values.isEmpty ? .nan : Double(values.reduce(0, +)) / Double(values.count) / 1e6 }
}

extension Duration {
    /// The duration in milliseconds, to the microsecond, as results and
    /// notifications report it (`elapsedMs`).
    public var protocolMilliseconds: Double {
        let (seconds, attoseconds) = components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return (milliseconds * 1000).rounded() / 1000
    }
}

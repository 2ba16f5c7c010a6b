import SQLiveEngine

extension Duration {
    /// The duration in milliseconds, to the microsecond, as results and
    /// notifications report it (`elapsedMs`).
    public var protocolMilliseconds: Double {
        (milliseconds * 1000).rounded() / 1000
    }
}

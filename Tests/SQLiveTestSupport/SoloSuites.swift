import Foundation

/// Suites that drive a browser or a replication process beside sqlive:
/// they load both cores for minutes, and the engine's timing-sensitive
/// suites running beside them met their time-outs in CI rehearsals. Plain
/// `swift test` runs them with the rest; `.ci/run` sets
/// `SQLIVE_SOLO_SUITES=after` for the whole suite and then runs them on
/// their own (`--filter`), as it does `RemoteDatabaseTests`.
public enum SoloSuites {
    /// Whether this run leaves them for a run of their own.
    public static let deferred = ProcessInfo.processInfo.environment["SQLIVE_SOLO_SUITES"] == "after"
    public static let reason = "runs on its own after the suite (SQLIVE_SOLO_SUITES=after: .ci/run)"
}

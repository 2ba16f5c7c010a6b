import GRDB

/// A change detected in the database, on its way to the scheduler.
enum ChangeSignal: Sendable {
    /// sqlive committed a transaction that modified these kinds of rows.
    case local([DatabaseEventKind])
    /// Another connection or process committed: which tables it touched is unknown.
    case external
    /// The schema changed (tables created, dropped, altered).
    case schemaChanged(ChangeCause)
    /// The database file was deleted or replaced.
    case fileChanged(String)
}

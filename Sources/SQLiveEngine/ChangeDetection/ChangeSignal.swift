import GRDB

/// A change detected in the database, on its way to the scheduler.
enum ChangeSignal: Sendable {
    /// sqlive committed a transaction that modified these kinds of rows.
    case local([DatabaseEventKind])
    /// sqlive committed changes that were not observed row by row (they ran
    /// while no live query existed, or one was registered meanwhile): every
    /// live query may be affected.
    case localUnobserved
    /// The session rolled a transaction back: what live queries read on
    /// the session's own connection may have shown is gone.
    case rolledBack
    /// Another connection or process committed: the tables it wrote
    /// (lowercased, read from the WAL), or `nil` when they are unknown.
    case external(Set<String>?)
    /// A data version change the session's own commit may explain, whose
    /// question the session was too busy to answer in time: refreshed as
    /// another writer's commit would be, but a presumption does not make a
    /// change of sqlive's own waiting for the same refresh "external".
    case presumedExternal(Set<String>?)
    /// The schema changed (tables created, dropped, altered), in the main
    /// or the temp schema.
    case schemaChanged(ChangeCause)
    /// The database file was deleted or replaced.
    case fileChanged(DatabaseFileChange)
    /// The main database file is damaged (`SQLiteFailure`: what is wrong),
    /// or was repaired (`nil`).
    case damage(SQLiteFailure?, DatabaseFileChange)
    /// A watched database file was written with no data version change
    /// (a checkpoint, or a write from outside SQLite): what connections
    /// cached of it may be stale.
    case fileWritten
    /// The tables the change wrote, lowercased, when known.
    var tables: Set<String>? {
        switch self {
        case .local(let kinds): Set(kinds.map { $0.tableName.lowercased() })
        case .external(let tables), .presumedExternal(let tables): tables
        default: nil
        }
    }
}

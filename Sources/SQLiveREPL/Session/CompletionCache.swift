import Foundation
import SQLiveEngine
import SQLiveLocks

/// The schema the REPL's completion offers, read from the database at
/// most once a second (a command that may change it says so).
///
/// Only touched on the session thread; `source(for:)` reads from any.
final class CompletionCache {
    // Mutable State: only touched on the session thread.
    private var schema = CompletionSchema()
    /// The database's checker, for the columns of a CTE or a subquery (as
    /// the language server's names them): a new one with each schema read,
    /// made only when a completion asks.
    private var checker: LazyChecker?
    private var readAt = Date.distantPast

    /// A completer over the database's schema, at most a second old, and
    /// the session's live-query names.
    func completer(database: LiveDatabase?, liveQueryNames: [String]) -> Completer {
        if let database, Date().timeIntervalSince(readAt) > 1 {
            do {
                let read = try Blocking.run { try await database.schema() }
                schema = CompletionSchema(read)
                checker = LazyChecker(database)
            } catch {
                // Completion goes on with the schema it had.
            }
            readAt = Date()
        } else if database == nil {
            checker = nil
        }
        let checker = checker
        return Completer(
            schema: schema, liveQueryNames: liveQueryNames, columnNames: { checker?.columnNames(of: $0) })
    }

    /// Reads the schema for completion from any thread; `nil` when it
    /// cannot be read now.
    static func source(for database: LiveDatabase?) -> (@Sendable () -> CompletionSchema?)? {
        guard let database else { return nil }
        return {
            do {
                return CompletionSchema(try Blocking.run { try await database.schema() })
            } catch {
                // Completion goes on with the schema it had.
                return nil
            }
        }
    }

    /// Forgets the schema read (after a command that may have changed it,
    /// or another database opened).
    func invalidate() {
        readAt = .distantPast
    }
}

/// A database's checker, made at its first use (read-only and lock-free on
/// a file, through the observer VFS; a copy of the schema in memory), or
/// `nil` when it cannot be made.
private final class LazyChecker: Sendable {
    private let database: LiveDatabase
    // Mutable State: guarded by the mutex; set once, at the first use.
    private let made = Locked<SQLChecker??>(nil)

    init(_ database: LiveDatabase) {
        self.database = database
    }

    func columnNames(of query: String) -> [String]? {
        let checker = made.withLock { made -> SQLChecker? in
            if let made { return made }
            let checker = try? Blocking.run { [database] in
                try await database.makeChecker(busyTimeout: .milliseconds(100))
            }
            made = .some(checker)
            return checker
        }
        return checker?.columnNames(of: query)
    }
}

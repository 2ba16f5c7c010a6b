import Foundation
import SQLiveEngine
import SQLiveLocks
import Synchronization

/// Counts the schema changes a database reported, whoever made them (its
/// schema watch, `LiveDatabase.schemaChanges()`): the completion caches
/// read the schema again when the count moved since they read it, never
/// on a timer.
final class SchemaGeneration: Sendable {
    private let count = Atomic<Int>(0)

    /// The changes counted so far.
    var current: Int { count.load(ordering: .acquiring) }

    /// Counts the changes of a database's schema, in a task its caller
    /// owns (cancelled with the database's other event pumps).
    func watch(_ database: LiveDatabase) -> Task<Void, Never> {
        Task { [self] in
            let changes: AsyncStream<Void>
            do {
                changes = try await database.schemaChanges()
            } catch {
                // The database closed as the watch began (its only failure):
                // completion reads the schema again at the next open.
                return
            }
            // A change before the watch began is covered by one count now.
            count.add(1, ordering: .releasing)
            for await _ in changes { count.add(1, ordering: .releasing) }
        }
    }
}

/// The schema the REPL's completion offers, read from the database again
/// when its schema changed (`SchemaGeneration`), or after a command that
/// may have changed it.
///
/// Only touched on the session thread; `source(for:)` reads from any.
final class CompletionCache {
    let generation: SchemaGeneration
    // Mutable State: only touched on the session thread.
    private var schema = CompletionSchema()
    /// The database's checker, for the columns of a CTE or a subquery (as
    /// the language server's names them): a new one with each schema read,
    /// made only when a completion asks.
    private var checker: LazyChecker?
    /// The generation the schema was read at; nil: read it again.
    private(set) var readGeneration: Int?

    init(generation: SchemaGeneration) {
        self.generation = generation
    }

    /// A completer over the database's schema as it is now, and the
    /// session's live-query names.
    func completer(database: LiveDatabase?, liveQueryNames: [String]) -> Completer {
        let now = generation.current
        if let database, readGeneration != now {
            do {
                let read = try Blocking.run { try await database.schema() }
                schema = CompletionSchema(read)
                checker = LazyChecker(database)
            } catch {
                // Completion goes on with the schema it had.
            }
            readGeneration = now
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
        readGeneration = nil
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

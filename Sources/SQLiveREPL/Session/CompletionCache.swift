import Foundation
import SQLiveEngine

/// The schema the REPL's completion offers, read from the database at
/// most once a second (a command that may change it says so).
///
/// Only touched on the session thread; `source(for:)` reads from any.
final class CompletionCache {
    // Mutable State: only touched on the session thread.
    private var schema = CompletionSchema()
    /// The database's checker, made again with the schema: it names the
    /// columns of a CTE or a subquery as the language server's does.
    private var checker: SQLChecker?
    private var readAt = Date.distantPast

    /// A completer over the database's schema, at most a second old, and
    /// the session's live-query names.
    func completer(database: LiveDatabase?, liveQueryNames: [String]) -> Completer {
        if let database, Date().timeIntervalSince(readAt) > 1 {
            do {
                let (read, checker) = try Blocking.run {
                    // Read-only and lock-free on a file (the observer VFS),
                    // a copy of the schema in memory.
                    (try await database.schema(), try? await database.makeChecker(busyTimeout: .milliseconds(100)))
                }
                schema = CompletionSchema(read)
                self.checker = checker
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

import Foundation
import SQLiveEngine

/// The schema the REPL's completion offers, read from the database at
/// most once a second (a command that may change it says so).
///
/// Only touched on the session thread; `source(for:)` reads from any.
final class CompletionCache {
    // Mutable State: only touched on the session thread.
    private var schema = CompletionSchema()
    private var readAt = Date.distantPast

    /// A completer over the database's schema, at most a second old, and
    /// the session's live-query names.
    func completer(database: LiveDatabase?, liveQueryNames: [String]) -> Completer {
        if let database, Date().timeIntervalSince(readAt) > 1 {
            do {
                let read = try Blocking.run { try await database.schema() }
                schema = CompletionSchema(read)
            } catch {
                // Completion goes on with the schema it had.
            }
            readAt = Date()
        }
        return Completer(schema: schema, liveQueryNames: liveQueryNames)
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

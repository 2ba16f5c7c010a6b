import GRDB
import GRDBSQLite

/// Stops a script whose caller cancelled it, even when the cancellation
/// came as the script was starting.
///
/// `sqlite3_interrupt` only reaches statements that are running: SQLite
/// forgets an interrupt that arrives while none is (it clears the flag
/// when the next statement starts). A request cancelled just as its
/// statement was being prepared would then run to its end, forever for an
/// endless query. So while a script runs with a cancellation test, SQLite
/// asks it every `instructions` virtual-machine instructions (its progress
/// handler), and a cancelled script is stopped as if interrupted; a script
/// already cancelled does not start.
enum CancellationWatch {
    /// How many virtual-machine instructions run between two questions.
    static let instructions: Int32 = 1000

    /// The question, boxed for SQLite's context pointer.
    private final class Question {
        let isCancelled: @Sendable () -> Bool
        init(_ isCancelled: @escaping @Sendable () -> Bool) { self.isCancelled = isCancelled }
    }

    /// Runs `body` on the connection with the progress handler asking
    /// `isCancelled`, and removes it after; runs `body` alone when there is
    /// no question.
    ///
    /// - throws: An "interrupted" `SQLiteFailure` without running `body`
    ///   when the script is cancelled already; otherwise what `body` throws.
    static func watching<T>(_ db: Database, _ isCancelled: (@Sendable () -> Bool)?, _ body: () throws -> T)
        throws -> T
    {
        guard let isCancelled else { return try body() }
        if isCancelled() {
            throw SQLiteFailure(code: 9, extendedCode: 9, message: "interrupted", offset: nil, statementIndex: 0)
        }
        guard let connection = db.sqliteConnection else { return try body() }
        let question = Question(isCancelled)
        return try withExtendedLifetime(question) {
            sqlite3_progress_handler(
                connection, instructions,
                { context in
                    guard let context else { return 0 }
                    let question = Unmanaged<Question>.fromOpaque(context).takeUnretainedValue()
                    return question.isCancelled() ? 1 : 0
                }, Unmanaged.passUnretained(question).toOpaque())
            defer { sqlite3_progress_handler(connection, 0, nil, nil) }
            return try body()
        }
    }
}

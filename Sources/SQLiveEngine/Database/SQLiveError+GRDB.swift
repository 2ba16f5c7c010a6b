import GRDB

extension SQLiteFailure {
    /// Converts a GRDB error, keeping SQLite's codes and message.
    init(_ error: DatabaseError, offset: Int? = nil, statementIndex: Int? = nil) {
        var message = error.message ?? "\(error.resultCode)"
        if error.extendedResultCode == .SQLITE_INTERRUPT || error.resultCode == .SQLITE_INTERRUPT {
            message = "interrupted"
        }
        self.init(
            code: error.resultCode.primaryResultCode.rawValue,
            extendedCode: error.extendedResultCode.rawValue,
            message: message,
            offset: offset,
            statementIndex: statementIndex,
            sql: error.sql)
    }
}

extension SQLiveError {
    /// Converts any error thrown by GRDB or by the engine into an engine error.
    static func wrap(_ error: any Error) -> SQLiveError {
        switch error {
        case let error as SQLiveError:
            return error
        case let error as DatabaseError:
            return .sqlite(SQLiteFailure(error))
        case is CancellationError:
            return .sqlite(SQLiteFailure(code: 9, extendedCode: 9, message: "interrupted"))
        default:
            return .sqlite(SQLiteFailure(code: 1, extendedCode: 1, message: "\(error)"))
        }
    }
}

/// How a latency case's database journals its commits: the mode its file
/// is made with, and the pragmas the writer runs on its own connection.
///
/// WAL is stored in the file; `synchronous` is per connection, and so are
/// the rollback-journal modes other than DELETE (the default). FULL is
/// every writer's default synchronous level, so FULL cases set nothing.
struct JournalSetting: Sendable {
    var label: String
    /// `WAL` or `DELETE`, set when the file is made.
    var fileMode: String
    /// Run by the writer on its connection, as `synchronous = NORMAL`.
    var pragmas: [String]

    static let walFull = JournalSetting(label: "WAL, synchronous=FULL", fileMode: "WAL", pragmas: [])
    static let walNormal = JournalSetting(
        label: "WAL, synchronous=NORMAL", fileMode: "WAL", pragmas: ["synchronous = NORMAL"])
    static let walOff = JournalSetting(label: "WAL, synchronous=OFF", fileMode: "WAL", pragmas: ["synchronous = OFF"])
    static let delete = JournalSetting(label: "rollback, DELETE", fileMode: "DELETE", pragmas: [])
    static let truncate = JournalSetting(
        label: "rollback, TRUNCATE", fileMode: "DELETE", pragmas: ["journal_mode = TRUNCATE"])
    static let persist = JournalSetting(
        label: "rollback, PERSIST", fileMode: "DELETE", pragmas: ["journal_mode = PERSIST"])

    static let all = [walFull, walNormal, walOff, delete, truncate, persist]
}

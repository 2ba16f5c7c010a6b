import SQLiveEngine
import SQLiveProtocol

/// The tools `tools/list` describes: names, descriptions, input and output
/// schemas (JSON Schema), and annotations.
enum MCPToolCatalog {
    static let names = ["query", "explain", "schema", "watch", "unwatch", "wait", "changes"]

    /// Whether the tool named changes the session's live queries (such
    /// calls run in order; the others each run at once, beside them).
    static func changesLiveQueries(_ name: String?) -> Bool {
        name == "watch" || name == "unwatch"
    }

    /// A SQL value in a result: null, a number, text, or a blob.
    private static let value: JSONValue = [
        "description": "A SQL value: null, a number, text, or a BLOB as {\"$blob\": base64}."
    ]

    private static let params: JSONValue = [
        "description": .string(
            "Values for the statement's parameters: an array for ? placeholders, or an object for :name ones. "
                + "A BLOB is {\"$blob\": \"<base64>\"}."),
        "type": ["array", "object"],
    ]

    private static let rowsProperties: [String: JSONValue] = [
        "columns": ["type": "array", "items": ["type": "string"]],
        "rows": ["type": "array", "items": ["type": "array", "items": value]],
        "truncated": [
            "type": "boolean", "description": "Whether rows were left out by the row cap or the size cap.",
        ],
        "truncatedBy": ["type": "string", "enum": ["rows", "bytes"]],
        "rowCount": ["type": "integer", "description": "How many rows are in `rows`."],
    ]

    static func tools(allowWrites: Bool, limits: ConfinedReader.Limits) -> JSONValue {
        let seconds = limits.time.protocolMilliseconds / 1000
        let readOnly: JSONValue = ["readOnlyHint": true, "openWorldHint": false]
        var query: [String: JSONValue] = rowsProperties
        query["elapsedMs"] = ["type": "number"]
        query["changes"] = ["type": "integer", "description": "Rows the statement changed (writes only)."]
        var watched: [String: JSONValue] = rowsProperties
        watched["name"] = ["type": "string"]
        watched["uri"] = ["type": "string"]
        watched["version"] = ["type": "integer"]
        watched["total"] = ["type": "integer", "description": "How many rows the live query really has."]
        return .array([
            tool(
                "query", title: "Run one SQL statement",
                description:
                    "Runs one SQL statement on the SQLite database and returns its rows. CTEs, EXPLAIN and PRAGMAs "
                    + "that read work. "
                    + (allowWrites
                        ? "Statements may write. "
                        : "The database is read-only: SQLite itself refuses statements that write, ATTACH, "
                            + "VACUUM INTO, extensions and PRAGMAs that change settings. ")
                    + "At most \(limits.rows) rows and \(limits.bytes) bytes are returned "
                    + "(`truncated` says so), and a statement is stopped after "
                    + "\(seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)) s.",
                input: [
                    "sql": ["type": "string", "description": "One SQL statement."],
                    "params": params,
                    "maxRows": [
                        "type": "integer", "minimum": 0, "maximum": .integer(Int64(limits.rows)),
                        "description": .string("The most rows to return (default and most: \(limits.rows))."),
                    ],
                ], required: ["sql"], output: query, outputRequired: ["columns", "rows", "truncated", "rowCount"],
                annotations: allowWrites
                    ? ["readOnlyHint": false, "destructiveHint": true, "openWorldHint": false] : readOnly),
            tool(
                "explain", title: "Explain a query's plan",
                description:
                    "Shows how SQLite will run a statement (EXPLAIN QUERY PLAN, never running it), hints about "
                    + "full scans, sorts and automatic indexes, and with `advise` the indexes that would help, "
                    + "each with the plan it would give.",
                input: [
                    "sql": ["type": "string", "description": "One SQL statement."],
                    "advise": ["type": "boolean", "description": "Also propose indexes (default false)."],
                ], required: ["sql"],
                output: [
                    "plan": [
                        "type": "array",
                        "items": [
                            "type": "object",
                            "properties": [
                                "id": ["type": "integer"], "parent": ["type": "integer"],
                                "detail": ["type": "string"],
                            ],
                        ],
                    ],
                    "hints": ["type": "array", "items": ["type": "string"]],
                    "advice": [
                        "type": "array",
                        "items": [
                            "type": "object",
                            "properties": [
                                "sql": ["type": "string"], "planAfter": ["type": "array"],
                            ],
                        ],
                    ],
                ], outputRequired: ["plan", "hints"], annotations: readOnly),
            tool(
                "schema", title: "The database's schema",
                description:
                    "Lists the tables and views with their columns, and the indexes and triggers, each with its "
                    + "CREATE statement. Also the resource sqlive://schema.",
                input: [:], required: [],
                output: [
                    "tables": ["type": "array"], "views": ["type": "array"], "indexes": ["type": "array"],
                    "triggers": ["type": "array"],
                ], outputRequired: ["tables", "views", "indexes", "triggers"], annotations: readOnly),
            tool(
                "watch", title: "Keep a query's result live",
                description:
                    "Registers a named live query: one read-only statement whose result sqlive keeps current "
                    + "whoever writes the database (this server, the app, another process). Its result is the "
                    + "resource sqlive://live/{name}. Then call `wait` to be handed its next change (what most "
                    + "clients need: they do not pass resource updates on), or subscribe to the resource. Use "
                    + "`query` instead for a one-off answer.",
                input: [
                    "name": ["type": "string", "description": "A name for the live query."],
                    "sql": ["type": "string", "description": "One read-only SQL statement."],
                    "params": params,
                ], required: ["name", "sql"], output: watched,
                outputRequired: ["name", "uri", "version", "columns", "rows", "truncated", "rowCount"],
                annotations: readOnly),
            tool(
                "wait", title: "Wait for a live query to change",
                description:
                    "Waits until the live query `name` (registered with `watch`) has a version after "
                    + "`afterVersion` — at once if it has one already — and returns its rows, its `version`, and "
                    + "`changes` since the result you last got from `watch` or `wait` (rows `removed`, `added` and "
                    + "`changed`, with their positions). Use it to watch until the app writes something: call "
                    + "`watch` once, then `wait` again and again with the `version` it returned. `timedOut` is "
                    + "true when nothing changed in `timeoutMs` (30 s by default, 600 s at most). Use `query` for "
                    + "a one-off read.",
                input: [
                    "name": ["type": "string"],
                    "afterVersion": [
                        "type": "integer",
                        "description":
                            "Return at the first version after this one (default: the last one returned to you).",
                    ],
                    "timeoutMs": ["type": "integer", "description": "How long to wait, in ms (default 30000)."],
                ], required: ["name"],
                output: watched.merging(
                    [
                        "timedOut": ["type": "boolean"], "afterVersion": ["type": "integer"],
                        "changes": ["type": "object"],
                    ], uniquingKeysWith: { $1 }),
                outputRequired: ["name", "version", "timedOut", "columns", "rows"], annotations: readOnly),
            tool(
                "changes", title: "What was just written",
                description:
                    "Lists the rows that each commit inserted, updated (old and new values) and deleted, whoever "
                    + "wrote them (the app, another process, this server), read from the pages each commit wrote. "
                    + "The first call starts the feed and returns no commit yet; then pass the `last` it returns "
                    + "as `after` to see what was written since. A row with op `unknown` means the table's rows "
                    + "for that commit could not be read (its `reason` says why): query the table instead.",
                input: [
                    "after": ["type": "integer", "description": "Only commits after this one (the `last` of a call)."],
                    "tables": ["type": "array", "items": ["type": "string"], "description": "Only these tables."],
                    "limit": ["type": "integer", "description": "The most rows returned."],
                ], required: [],
                output: [
                    "commits": ["type": "array"], "last": ["type": "integer"], "more": ["type": "boolean"],
                ], outputRequired: ["commits", "last", "more"], annotations: readOnly),
            tool(
                "unwatch", title: "End a live query",
                description: "Ends a live query registered with `watch`; its resource goes away.",
                input: ["name": ["type": "string"]], required: ["name"],
                output: ["name": ["type": "string"]], outputRequired: ["name"],
                annotations: ["readOnlyHint": true, "idempotentHint": true, "openWorldHint": false]),
        ])
    }

    private static func tool(
        _ name: String, title: String, description: String, input: [String: JSONValue], required: [String],
        output: [String: JSONValue], outputRequired: [String], annotations: JSONValue
    ) -> JSONValue {
        [
            "name": .string(name),
            "title": .string(title),
            "description": .string(description),
            "inputSchema": [
                "type": "object", "properties": .object(input), "required": .array(required.map(JSONValue.string)),
                "additionalProperties": false,
            ],
            "outputSchema": [
                "type": "object", "properties": .object(output),
                "required": .array(outputRequired.map(JSONValue.string)),
            ],
            "annotations": annotations,
        ]
    }
}

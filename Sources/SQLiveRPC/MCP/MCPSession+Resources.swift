import SQLiveEngine
import SQLiveProtocol

extension MCPSession {
    /// What `initialize` tells the agent about this server.
    var instructions: String {
        let mode = allowsWrites ? "writable (--allow-writes)" : "read-only"
        return """
            sqlive serves the SQLite database \(shownPath), \(mode). Start with the `schema` tool. `query` runs \
            one statement (CTEs, EXPLAIN and PRAGMAs that read work); `explain` with `advise: true` shows the plan \
            and the indexes that would help. `watch` keeps a query's result live as the resource \
            sqlive://live/{name}, whoever writes the database: `wait` returns at its next change with what \
            changed (the way to "watch until the app writes X"), and a client that subscribes or listens to \
            the resource is told of each change. \
            Every call has a time limit, a row cap and a size cap; `truncated` says when rows were left out.
            """
    }

    var resourceList: [JSONValue] {
        var resources: [JSONValue] = [
            [
                "uri": .string(MCPProtocol.schemaURI), "name": "schema", "title": "The database's schema",
                "description": "Tables, views, indexes and triggers, with their columns and CREATE statements.",
                "mimeType": "application/json",
            ]
        ]
        for name in watchNames {
            let watch = self.watch(named: name)
            resources.append(
                [
                    "uri": .string(MCPProtocol.liveURI(name)), "name": .string(name),
                    "title": .string("Live query \(name)"),
                    "description": .string(
                        watch?.first.result.columns.isEmpty == false
                            ? "The current rows of a live query." : "A live query."),
                    "mimeType": "application/json",
                ])
        }
        return resources
    }

    var resourceTemplates: [JSONValue] {
        [
            [
                "uriTemplate": "sqlive://live/{name}", "name": "live query",
                "title": "A live query's current rows",
                "description": "The rows of the live query registered with the watch tool under this name.",
                "mimeType": "application/json",
            ]
        ]
    }

    /// `resources/read`.
    func read(_ params: MCPResourceParams) async throws(ResponseError) -> JSONValue {
        let uri = params.uri
        let contents: JSONValue
        if uri == MCPProtocol.schemaURI {
            let database: LiveDatabase
            do throws(ToolFailure) {
                database = try openDatabase()
            } catch {
                throw .internalError(error.message)
            }
            do throws(SQLiveError) {
                contents = Self.schemaJSON(try await database.committedSchema())
            } catch {
                throw .internalError(error.description)
            }
        } else {
            // Unknown, or unwatched meanwhile.
            guard let name = MCPProtocol.liveName(of: uri), let watch = watch(named: name),
                let (snapshot, error) = try? await watch.current()
            else { throw Self.resourceNotFound(uri) }
            contents = .object(liveJSON(snapshot, error: error))
            seen.withLock { $0[name] = snapshot }
        }
        return [
            "contents": [
                ["uri": .string(uri), "mimeType": "application/json", "text": .string(Self.text(of: contents))]
            ]
        ]
    }
}

import SQLiveEngine

/// What a session's dot-commands set, as in the sqlite3 shell: how results
/// print (`.mode`, `.headers`, `.nullvalue`) and what prints beside them
/// (`.timer`, `.trace`, `.changes`).
struct ShellSettings {
    var mode: OutputMode
    var headers = false
    var nullText = "NULL"
    /// `.timer on`: the run time after each SQL command.
    var timer = false
    var trace = DotCommand.TraceMode.off
    /// `.changes on`: the change counters after each SQL command.
    var changes = false

    /// What renderers use, for a terminal this wide (`nil`: not a terminal).
    func renderSettings(maxWidth: Int?, colour: Bool) -> RenderSettings {
        RenderSettings(mode: mode, headers: headers, nullText: nullText, maxWidth: maxWidth, colour: colour)
    }

    /// What the engine's tracer must do for `.trace`.
    var traceSettings: TraceSettings {
        TraceSettings(enabled: trace != .off, profile: trace == .profile)
    }
}

import Foundation

/// Facts about the terminal.
enum Terminal {
    /// The width grids fit in: the terminal's, or `$COLUMNS` when standard
    /// output is not a terminal; `nil` (never cut) otherwise.
    static func width() -> Int? {
        var size = winsize()
        if isOutputTerminal, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return Int(size.ws_col)
        }
        if let columns = getenv("COLUMNS").flatMap({ Int(String(cString: $0)) }), columns > 0 {
            return columns
        }
        return nil
    }

    /// The terminal's rows and columns, when standard output is a terminal.
    static func size() -> Size? {
        var size = winsize()
        guard isOutputTerminal, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else {
            return nil
        }
        return Size(rows: Int(size.ws_row), columns: Int(size.ws_col))
    }

    /// A terminal's size.
    struct Size: Hashable, Sendable {
        var rows: Int
        var columns: Int
    }

    /// Whether standard output is a terminal (asked once: each statement's
    /// settings need it).
    static let isOutputTerminal = isatty(1) != 0

    /// Whether output is coloured.
    ///
    /// `NO_COLOR` set to anything but the empty string turns colour off,
    /// whatever else says (<https://no-color.org>). Otherwise
    /// `SQLIVE_COLOR=always` turns it on, even in scripts and pipes (for
    /// tests and for `less -R`), and `SQLIVE_COLOR=never` off; by default,
    /// only interactive sessions writing to a terminal whose `TERM` is not
    /// `dumb` use colour.
    static func usesColour(interactive: Bool, environment: [String: String], outputIsTerminal: Bool) -> Bool {
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return false }
        switch environment["SQLIVE_COLOR"]?.lowercased() {
        case "always": return true
        case "never": return false
        default: return interactive && outputIsTerminal && environment["TERM"] != "dumb"
        }
    }

    /// Whether colour was forced on with `SQLIVE_COLOR=always` (and not
    /// refused by `NO_COLOR`): standard error is coloured even when it is
    /// not a terminal.
    static func colourForced(environment: [String: String]) -> Bool {
        usesColour(interactive: false, environment: environment, outputIsTerminal: false)
    }

    /// Whether the terminal can hold the live panel: standard input and
    /// output are terminals that understand cursor addressing and scroll
    /// regions (`TERM` set, and not `dumb`).
    static func supportsPanel(environment: [String: String]) -> Bool {
        guard isOutputTerminal, isatty(0) != 0, let term = environment["TERM"] else { return false }
        return !term.isEmpty && term != "dumb"
    }
}

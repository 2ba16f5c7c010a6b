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

    /// Whether standard output is a terminal (asked once: each statement's
    /// settings need it).
    static let isOutputTerminal = isatty(1) != 0
}

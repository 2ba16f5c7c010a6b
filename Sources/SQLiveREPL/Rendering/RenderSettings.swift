/// Everything a renderer needs to know besides the rows.
///
/// ```swift
/// var settings = RenderSettings(mode: .box)
/// settings.maxWidth = 80   // truncate wide cells to fit 80 columns
/// ```
public struct RenderSettings: Hashable, Sendable {
    /// The output mode.
    public var mode: OutputMode
    /// Whether `list` and `csv` print a header line (grids always do; `json`
    /// and `line` name every value anyway).
    public var headers: Bool
    /// How NULL is shown in `box`, `table`, `markdown`, `line` and `list`
    /// (`csv` leaves the field empty, `json` writes `null`).
    public var nullText: String
    /// The terminal width: `box` and `table` cut wide cells with an ellipsis
    /// to fit it. `nil` never cuts.
    public var maxWidth: Int?
    /// Whether ANSI colours may be used (NULL is dimmed).
    public var colour: Bool

    public init(
        mode: OutputMode, headers: Bool = false, nullText: String = "NULL", maxWidth: Int? = nil,
        colour: Bool = false
    ) {
        self.mode = mode
        self.headers = headers
        self.nullText = nullText
        self.maxWidth = maxWidth
        self.colour = colour
    }
}

/// ANSI escape sequences, used only when colour is on.
enum ANSI {
    static let dim = "\u{1B}[2m"
    static let bold = "\u{1B}[1m"
    static let red = "\u{1B}[31m"
    static let cyan = "\u{1B}[36m"
    /// A value that changed since the previous version: reverse video.
    static let changed = "\u{1B}[7m"
    /// A row added since the previous version: green.
    static let added = "\u{1B}[32m"
    /// A row removed since the previous version: red, struck through.
    static let removed = "\u{1B}[31;9m"
    static let reset = "\u{1B}[0m"
}

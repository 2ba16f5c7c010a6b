/// Parsing of the output settings' dot-commands, as the sqlite3 3.40.1
/// shell reads them: `.mode`, `.headers`, `.separator`, `.nullvalue`,
/// `.width`, `.show`, `.print`, `.explain on|off|auto`. Their arguments
/// have backslash escapes resolved unless single-quoted, as in sqlite3.
extension DotCommand {
    /// What `.mode` asks for.
    public struct ModeRequest: Hashable, Sendable {
        /// The mode; `nil` prints the current one (and sets it again, as sqlite3 does).
        public var mode: OutputMode?
        /// `.mode insert TABLE`.
        public var table: String?
        /// `--wrap`, `--wordwrap`, `--quote` (for the columnar modes).
        public var options: ColumnarOptions

        public init(mode: OutputMode?, table: String? = nil, options: ColumnarOptions = ColumnarOptions()) {
            self.mode = mode
            self.table = table
            self.options = options
        }
    }

    /// `.explain`'s setting.
    public enum ExplainSetting: Hashable, Sendable {
        case on, off, auto
        /// A number other than 0 and 1: sqlite3 changes nothing.
        case unchanged
    }

    /// The modes `.mode` names in its error message.
    static let modeNames = "ascii box column csv html insert json line list markdown qbox quote table tabs tcl"

    /// The output command `name`, or `nil` when `name` is not one (or is
    /// `.explain SQL`, sqlive's own).
    static func parseOutput(name: String, tokens: [CommandLineTokens.Token]) throws(ParseError) -> DotCommand? {
        let arguments = tokens.dropFirst().map(\.text)
        func usage(_ text: String) -> ParseError { ParseError(description: "Usage: " + text) }
        switch name {
        case "mode":
            return try parseMode(arguments)
        case "headers":
            guard arguments.count == 1 else { throw usage(".headers on|off") }
            let (value, warning) = booleanValue(arguments[0])
            return warned(warning, .headers(value != 0))
        case "separator":
            guard !arguments.isEmpty else { throw usage(".separator COL ?ROW?") }
            return .separator(
                column: arguments[0], row: arguments.count > 1 ? arguments[1] : nil, extra: arguments.count > 2)
        case "nullvalue":
            guard arguments.count == 1 else { throw usage(".nullvalue STRING") }
            return .nullValue(arguments[0])
        case "width":
            return .width(arguments.map { Int(Int32(truncatingIfNeeded: integerValue($0))) })
        case "show":
            guard arguments.isEmpty else { throw usage(".show") }
            return .show
        case "print":
            return .print(arguments.joined(separator: " "))
        case "explain":
            // sqlite3's form for its arguments (extra ones ignored, as it
            // does), and for a quoted one; sqlive's `.explain SQL` otherwise.
            guard let argument = arguments.first else { return .explainSetting(.on) }
            if argument == "auto" { return .explainSetting(.auto) }
            guard isBooleanWord(argument) || tokens[1].quote != nil else { return nil }
            let (value, warning) = booleanValue(argument)
            return warned(warning, .explainSetting(value == 1 ? .on : value == 0 ? .off : .unchanged))
        default:
            return nil
        }
    }

    private static func warned(_ warning: String?, _ command: DotCommand) -> DotCommand {
        warning.map { .warning($0, then: command) } ?? command
    }

    /// `.mode`'s arguments, read in sqlite3's order: options anywhere, then
    /// the mode, then a table name (for `insert`).
    private static func parseMode(_ arguments: [String]) throws(ParseError) -> DotCommand {
        var options = ColumnarOptions()
        var name: String?
        var table: String?
        var warnings: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let hasValue = index + 1 < arguments.count
            if option(argument, is: "wrap") && hasValue {
                index += 1
                options.wrap = Int(Int32(truncatingIfNeeded: integerValue(arguments[index])))
            } else if option(argument, is: "ww") {
                options.wordWrap = true
            } else if option(argument, is: "wordwrap") && hasValue {
                index += 1
                let (value, warning) = booleanValue(arguments[index])
                if let warning { warnings.append(warning) }
                options.wordWrap = UInt8(truncatingIfNeeded: value) != 0
            } else if option(argument, is: "quote") {
                options.quote = true
            } else if option(argument, is: "noquote") {
                options.quote = false
            } else if name == nil {
                name = argument
                if argument == "qbox" { options = .quoted }
            } else if table == nil {
                table = argument
            } else if argument.hasPrefix("-") {
                throw ParseError(
                    description: "unknown option: \(argument)\noptions:\n  --noquote\n  --quote\n"
                        + "  --wordwrap on/off\n  --wrap N\n  --ww")
            } else {
                throw ParseError(description: "extra argument: \"\(argument)\"")
            }
            index += 1
        }
        var mode: OutputMode?
        if let name {
            guard let named = modeNamed(name) else {
                throw ParseError(description: "mode should be one of: \(modeNames)")
            }
            mode = named
        }
        var command = DotCommand.mode(ModeRequest(mode: mode, table: table, options: options))
        for warning in warnings.reversed() { command = .warning(warning, then: command) }
        return command
    }

    /// The mode a name stands for: any prefix of sqlite3's names, tried in
    /// its order (`c` is `column`, `t` `tcl`); `qbox` in full only.
    static func modeNamed(_ name: String) -> OutputMode? {
        if name == "qbox" { return .qbox }
        let order: [(String, OutputMode)] = [
            ("lines", .line), ("columns", .column), ("list", .list), ("html", .html), ("tcl", .tcl),
            ("csv", .csv), ("tabs", .tabs), ("insert", .insert), ("quote", .quote), ("ascii", .ascii),
            ("markdown", .markdown), ("table", .table), ("box", .box), ("count", .count), ("off", .off),
            ("json", .json),
        ]
        return order.first { $0.0.hasPrefix(name) }?.1
    }

    /// `-NAME` or `--NAME`, as sqlite3's options are spelled.
    private static func option(_ argument: String, is name: String) -> Bool {
        argument == "-" + name || argument == "--" + name
    }

    /// Whether sqlite3's `booleanValue` reads the text without complaint.
    private static func isBooleanWord(_ text: String) -> Bool {
        booleanValue(text).warning == nil
    }

    /// sqlite3's `booleanValue`: a number (decimal or `0x` hex) is itself,
    /// `on`/`yes` 1, `off`/`no` 0, in any case; anything else is 0, with a
    /// warning for standard error.
    static func booleanValue(_ text: String) -> (value: Int64, warning: String?) {
        let bytes = Array(text.utf8)
        let digits: ArraySlice<UInt8> =
            bytes.starts(with: Array("0x".utf8))
            ? bytes[2...].prefix { hexDigit($0) != nil } : bytes.prefix { $0 >= 0x30 && $0 <= 0x39 }
        let consumed = (bytes.starts(with: Array("0x".utf8)) ? 2 : 0) + digits.count
        if consumed > 0 && consumed == bytes.count {
            return (Int64(Int32(truncatingIfNeeded: integerValue(text))), nil)
        }
        switch text.lowercased() {
        case "on", "yes": return (1, nil)
        case "off", "no": return (0, nil)
        default: return (0, "ERROR: Not a boolean value: \"\(text)\". Assuming \"no\".")
        }
    }

    private static func hexDigit(_ byte: UInt8) -> Int64? {
        switch byte {
        case 0x30...0x39: Int64(byte - 0x30)
        case 0x61...0x66: Int64(byte - 0x61 + 10)
        case 0x41...0x46: Int64(byte - 0x41 + 10)
        default: nil
        }
    }

    /// sqlite3's `integerValue`: an optional sign, decimal digits or `0x`
    /// hex, then an optional suffix (`KiB`, `MiB`, `GiB`, `KB`, `MB`, `GB`,
    /// `K`, `M`, `G`); whatever else follows is ignored.
    static func integerValue(_ text: String) -> Int64 {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        } else if bytes.first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
        var value: Int64 = 0
        if bytes.starts(with: Array("0x".utf8)) {
            bytes = bytes.dropFirst(2)
            while let first = bytes.first, let digit = hexDigit(first) {
                value = (value &<< 4) &+ digit
                bytes = bytes.dropFirst()
            }
        } else {
            while let first = bytes.first, first >= 0x30 && first <= 0x39 {
                value = value &* 10 &+ Int64(first - 0x30)
                bytes = bytes.dropFirst()
            }
        }
        let suffixes: [(String, Int64)] = [
            ("kib", 1024), ("mib", 1024 * 1024), ("gib", 1024 * 1024 * 1024), ("kb", 1000), ("mb", 1_000_000),
            ("gb", 1_000_000_000), ("k", 1000), ("m", 1_000_000), ("g", 1_000_000_000),
        ]
        let rest = String(decoding: bytes, as: UTF8.self).lowercased()
        if let multiplier = suffixes.first(where: { $0.0 == rest })?.1 { value = value &* multiplier }
        return negative ? 0 &- value : value
    }
}

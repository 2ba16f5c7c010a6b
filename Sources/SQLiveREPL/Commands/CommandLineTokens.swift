/// Splits a dot-command into arguments, the way sqlite3 does.
///
/// Arguments are separated by spaces; `'...'` and `"..."` group an
/// argument with spaces. Each token remembers where it ends, so that a
/// command like `.watch NAME SQL` can take the rest of the line verbatim.
struct CommandLineTokens {
    struct Token: Hashable {
        var text: String
        /// The index just past the token in the line.
        var end: String.Index
    }

    var tokens: [Token] = []

    init(_ line: String) {
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex, line[index].isWhitespace { index = line.index(after: index) }
            guard index < line.endIndex else { break }
            var text = ""
            if line[index] == "'" || line[index] == "\"" {
                let quote = line[index]
                index = line.index(after: index)
                while index < line.endIndex, line[index] != quote {
                    text.append(line[index])
                    index = line.index(after: index)
                }
                if index < line.endIndex { index = line.index(after: index) }
            } else {
                while index < line.endIndex, !line[index].isWhitespace {
                    text.append(line[index])
                    index = line.index(after: index)
                }
            }
            tokens.append(Token(text: text, end: index))
        }
    }
}

/// The patterns `.tables`, `.schema` and `.indexes` filter names with.
enum NamePattern {
    /// SQL `LIKE` matching: case-insensitive, `%` any run, `_` any
    /// character (SQLite's own `LIKE` agrees: `NamePatternTests`).
    ///
    /// One pass with a single backtrack point (the last `%`): at most
    /// pattern × text steps, whatever the pattern (`%a%a%a%…b` included).
    static func like(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.lowercased())
        let text = Array(text.lowercased())
        var p = 0
        var t = 0
        var star: Int?
        var resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "%" {
                star = p
                p += 1
                resume = t
            } else if p < pattern.count, pattern[p] == "_" || pattern[p] == text[t] {
                p += 1
                t += 1
            } else if let star {
                // Let the last `%` take one more character.
                p = star + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "%" { p += 1 }
        return p == pattern.count
    }
}

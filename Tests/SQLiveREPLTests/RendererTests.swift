import Foundation
import SQLiveEngine
import Testing

@testable import SQLiveREPL

@Suite("Renderers")
struct RendererTests {
    let columns = ["id", "name", "score"]
    let rows: [[SQLValue]] = [
        [.integer(1), .text("Blob"), .integer(20)],
        [.integer(2), .text("Blob Jr"), .null],
    ]

    func output(_ mode: OutputMode, headers: Bool = false, maxWidth: Int? = nil) -> String {
        render(
            columns: columns, rows: rows,
            settings: RenderSettings(mode: mode, headers: headers, nullText: "NULL", maxWidth: maxWidth, terminal: true)
        )
    }

    @Test func box() {
        #expect(
            output(.box) == """
                ┌────┬─────────┬───────┐
                │ id │  name   │ score │
                ├────┼─────────┼───────┤
                │  1 │ Blob    │    20 │
                │  2 │ Blob Jr │ NULL  │
                └────┴─────────┴───────┘

                """)
    }

    @Test func table() {
        #expect(
            output(.table) == """
                +----+---------+-------+
                | id | name    | score |
                +----+---------+-------+
                |  1 | Blob    |    20 |
                |  2 | Blob Jr | NULL  |
                +----+---------+-------+

                """)
    }

    @Test func markdown() {
        let text = render(
            columns: ["a|b"], rows: [[.text("x|y")]], settings: RenderSettings(mode: .markdown, terminal: true))
        #expect(
            text == """
                | a|b  |
                |------|
                | x\\|y |

                """)
        #expect(
            output(.markdown)
                == """
                | id |  name   | score |
                |----|---------|-------|
                |  1 | Blob    |    20 |
                |  2 | Blob Jr | NULL  |

                """.replacingOccurrences(of: "|  name   |", with: "| name    |"))
    }

    @Test func listWithAndWithoutHeaders() {
        #expect(output(.list) == "1|Blob|20\n2|Blob Jr|NULL\n")
        #expect(output(.list, headers: true) == "id|name|score\n1|Blob|20\n2|Blob Jr|NULL\n")
    }

    @Test func csvQuotesPerRFC4180() {
        let text = render(
            columns: ["a", "b,c"],
            rows: [
                [.text("plain"), .text("with \"quote\"")], [.text("line\nbreak"), .null], [.real(1.5), .integer(-3)],
            ],
            settings: RenderSettings(mode: .csv, headers: true))
        #expect(text == "a,\"b,c\"\r\nplain,\"with \"\"quote\"\"\"\r\n\"line\nbreak\",\r\n1.5,-3\r\n")
    }

    /// As sqlite3 writes them: integers exact, a BLOB's bytes as a string,
    /// a REAL as `%!.20g`, infinities as `1e999`.
    @Test func jsonKeepsIntegersExactAndBlobsAsStrings() {
        let text = render(
            columns: ["big", "blob", "nothing", "text", "real", "inf"],
            rows: [
                [
                    .integer(Int64.max), .blob(Data([0, 1, 0x41])), .null, .text("a\"b\n\u{8}"), .real(0.1),
                    .real(-.infinity),
                ]
            ],
            settings: RenderSettings(mode: .json))
        #expect(
            text
                == "[{\"big\":9223372036854775807,\"blob\":\"\\u0000\\u0001A\","
                + "\"nothing\":null,\"text\":\"a\\\"b\\n\\b\",\"real\":0.10000000000000000555,\"inf\":-1e999}]\n"
        )
    }

    @Test func jsonEmptyAndSeveralRows() throws {
        // sqlite3 prints nothing for a statement that returns no row.
        #expect(render(columns: ["a"], rows: [], settings: RenderSettings(mode: .json)) == "")
        let text = output(.json)
        #expect(
            text == "[{\"id\":1,\"name\":\"Blob\",\"score\":20},\n{\"id\":2,\"name\":\"Blob Jr\",\"score\":null}]\n")
        let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        #expect(parsed?.count == 2)
    }

    @Test func line() {
        #expect(output(.line) == "   id = 1\n name = Blob\nscore = 20\n\n   id = 2\n name = Blob Jr\nscore = NULL\n")
    }

    @Test func wideCellsAreCutToTheTerminalWidth() {
        let long = String(repeating: "x", count: 100)
        let text = render(
            columns: ["id", "text"], rows: [[.integer(1), .text(long)]],
            settings: RenderSettings(mode: .box, maxWidth: 40, terminal: true))
        for line in text.split(separator: "\n") {
            #expect(CellText.width(String(line)) == 40)
        }
        #expect(text.contains("…"))
        // csv and json never cut.
        let csv = render(
            columns: ["text"], rows: [[.text(long)]], settings: RenderSettings(mode: .csv, maxWidth: 40))
        #expect(csv == long + "\r\n")
    }

    @Test func wideCharactersCountTwoColumns() {
        #expect(CellText.width("abc") == 3)
        #expect(CellText.width("日本") == 4)
        #expect(CellText.width("e\u{301}") == 1)
        #expect(CellText.truncate("日本語テキスト", toWidth: 5) == "日本…")
        let text = render(
            columns: ["t"], rows: [[.text("日本")], [.text("ab")]], settings: RenderSettings(mode: .table, terminal: true)
        )
        #expect(text.contains("| 日本 |\n| ab   |"))
    }

    @Test func gridCellsOfEveryKindAlign() {
        // Each cell's text is kept as bytes until the end: reals, blobs,
        // wide and combining characters, control characters, NULL, and a
        // row shorter than the header all line up.
        let text = render(
            columns: ["n", "r", "b", "t"],
            rows: [
                [.integer(-12), .real(0.5), .blob(Data([0xAB])), .text("日本")],
                [.null, .real(1e300), .null, .text("e\u{301}\tx")],
                [.integer(7)],
            ],
            settings: RenderSettings(mode: .table, nullText: "NULL", terminal: true))
        #expect(
            text == """
                +------+----------+-------+------+
                | n    | r        | b     | t    |
                +------+----------+-------+------+
                |  -12 |      0.5 | X'ab' | 日本 |
                | NULL | 1.0e+300 | NULL  | e\u{301}\\tx |
                |    7 |          |       |      |
                +------+----------+-------+------+

                """)
    }

    @Test func controlCharactersStayOnOneLineInGrids() {
        let text = render(
            columns: ["t"], rows: [[.text("a\nb\tc")]], settings: RenderSettings(mode: .box, terminal: true))
        #expect(text.contains("│ a\\nb\\tc │"))
    }

    @Test func blobsAndRealsInHumanModes() {
        var renderer = makeRenderer(RenderSettings(mode: .list))
        var output = OutputBuffer()
        renderer.begin(columns: ["b", "r", "i"], into: &output)
        renderer.row([SQLValue.blob(Data([0xCA, 0xFE])), .real(2), .real(0.5)], into: &output)
        renderer.end(into: &output)
        // sqlite3 writes a BLOB's own bytes (up to a NUL); the terminal shows a literal.
        #expect(output.bytes == [0xCA, 0xFE] + Array("|2.0|0.5\n".utf8))
        let terminal = render(
            columns: ["b"], rows: [[.blob(Data([0xCA, 0xFE]))], [.blob(Data([0x41, 0, 0x42]))]],
            settings: RenderSettings(mode: .list, terminal: true))
        #expect(terminal == "X'cafe'\nX'410042'\n")
        let cut = render(columns: ["b"], rows: [[.blob(Data([0x41, 0, 0x42]))]], settings: RenderSettings(mode: .list))
        #expect(cut == "A\n")
    }

    @Test(arguments: [0.1, 2.0, -3.5, 1e20, 1.5e-7, 123456789012345678.0, 0.0, -0.0, 1.0 / 3.0, .pi])
    func realsLikeSQLite(_ value: Double) {
        #expect(CellText.real(value) == SQLValue.format(real: value))
    }

    @Test func nullTextAndColour() {
        let text = render(
            columns: ["a"], rows: [[.null]], settings: RenderSettings(mode: .list, nullText: "∅", colour: true))
        #expect(text == "\u{1B}[2m∅\u{1B}[0m\n")
    }

    @Test func renderersStream() {
        // Streaming modes write each row as it comes.
        for mode in [OutputMode.csv, .json, .line, .list] {
            var renderer = makeRenderer(RenderSettings(mode: mode))
            var text = OutputBuffer()
            renderer.begin(columns: ["a"], into: &text)
            let before = text.count
            renderer.row([SQLValue.integer(1)], into: &text)
            #expect(text.count > before, "\(mode) should write rows at once")
        }
    }

    @Test func fitNarrowsTheWidestColumnsFirst() {
        #expect(GridRenderer.fit([2, 50, 10], into: 40) == [2, 18, 10])
        #expect(GridRenderer.fit([2, 3], into: 5) == [2, 3])
    }
}

@Suite("Live query printer")
struct LiveQueryPrinterTests {
    @Test func reprintHasAHeaderThenRows() {
        let result = LiveQueryResult(columns: ["name"], rows: [[.text("Blob")], [.text("Blob Sr")]])
        let previous = LiveQueryResult(columns: ["name"], rows: [[.text("Blob")], [.text("Blob Jr")]])
        let printer = LiveQueryPrinter(settings: RenderSettings(mode: .list))
        func print(diff: Bool) -> String {
            printer.changed(
                name: "leaders", version: 3, cause: .external, coalesced: 2, result: result, previous: previous,
                diff: diff)
        }
        #expect(print(diff: false) == "-- leaders v3 (external, coalesced 2)\nname\nBlob\nBlob Sr\n")
        #expect(print(diff: true) == "-- leaders v3 (external, coalesced 2)\nchange|name\n-|Blob Jr\n+|Blob Sr\n")
    }
}

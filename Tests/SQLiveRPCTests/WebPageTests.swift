import Foundation
import SQLiveTestSupport
import Testing

/// `sqlive --web` in a real browser: Debian's Chromium and its driver,
/// through Selenium (PyPI). A watched aggregate's grid and chart follow
/// the sqlite3 shell's and Python's commits; a typo gets SQLite's
/// diagnostic; a write is refused read-only; no token, a forged `Host`, a
/// foreign `Origin` are refused; a dropped WebSocket reconnects and
/// registers its live queries again; no request leaves 127.0.0.1. The
/// scripts are in `Tests/WebClients/python`; screenshots go to
/// `.build/web-screenshots`. `.ci/run` installs Chromium and Selenium;
/// without them, this test says so and is skipped.
@Suite("The live page in a browser", .timeLimit(.minutes(10)))
struct WebPageTests {
    static let scripts = SQLiveBinary.packageRoot.appendingPathComponent("Tests/WebClients/python")

    static func hasBrowser() async -> Bool {
        guard let python = EditorClientTests.python,
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        else { return false }
        return await commandSucceeds(python, ["-c", "import selenium, pytest"])
    }

    @Test(
        .disabled(if: SoloSuites.deferred, Comment(rawValue: SoloSuites.reason)),
        .enabled("Chromium, chromium-driver or Selenium is not installed") { await hasBrowser() },
        .enabled(if: EditorClientTests.hasSQLite3Shell, "the sqlite3 shell is not installed"))
    func chromium() async throws {
        let directory = try TemporaryDirectory()
        let screenshots = SQLiveBinary.packageRoot.appendingPathComponent(".build/web-screenshots").path
        let (status, output) = try await EditorClientTests.run(
            try #require(EditorClientTests.python),
            ["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", Self.scripts.path],
            in: directory.url,
            environment: [
                "SQLIVE_BIN": SQLiveBinary.path, "PYTHONDONTWRITEBYTECODE": "1", "SQLIVE_SCREENSHOTS": screenshots,
            ])
        if let figure = output.split(separator: "\n").first(where: { $0.contains("web page: external commit") }) {
            print(figure)
        }
        #expect(status == 0, "the browser tests failed:\n\(output)")
        #expect(output.contains("6 passed"), "\(output)")
        #expect(!output.contains("skipped"), "\(output)")
    }
}

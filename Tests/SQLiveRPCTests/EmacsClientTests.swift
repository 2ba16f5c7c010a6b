import Foundation
import SQLiveTestSupport
import Testing

/// The language server driven by a real headless Emacs through eglot, with
/// the sample configuration `Samples/editors/emacs/sqlive-eglot.el`: Flymake
/// showing and clearing SQLite's diagnostic, `sqlive-run-statement`'s table
/// in `*sqlive*`, errors as user errors, C-g stopping a statement.
///
/// The script, `Tests/LSPClients/emacs/test-eglot.el`, says how to run it by
/// hand. `.ci/run` installs Emacs and eglot (Debian's `emacs-nox` and
/// `elpa-eglot`); without them, this test says so and is skipped.
@Suite("Editor clients: Emacs eglot", .timeLimit(.minutes(10)))
struct EmacsClientTests {
    static let emacs: String? = which("emacs")

    /// Whether that Emacs has eglot: built in (Emacs 29 and later), or
    /// Debian's `elpa-eglot`, which the script activates under `-Q`.
    static func hasEglot() async -> Bool {
        guard let emacs else { return false }
        let probe = """
            (kill-emacs (if (or (locate-library "eglot")
                                (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/eglot-*")
                                (file-expand-wildcards "/usr/local/share/emacs/site-lisp/elpa/eglot-*"))
                            0 1))
            """
        return await commandSucceeds(emacs, ["--batch", "-Q", "--eval", probe])
    }

    @Test(
        .enabled(if: emacs != nil, "Emacs is not installed (apt-get install emacs-nox elpa-eglot)"),
        .enabled("Emacs has no eglot (Emacs 29 or later, or apt-get install elpa-eglot)") { await hasEglot() },
        .enabled(if: EditorClientTests.hasSQLite3Shell, "the sqlite3 shell is not installed"))
    func eglotShowsClearsAndRuns() async throws {
        // The files the script writes (databases, .sql files,
        // .dir-locals.el) stay in a directory of its own.
        let directory = try TemporaryDirectory()
        let root = SQLiveBinary.packageRoot
        let (status, output) = try await EditorClientTests.run(
            try #require(Self.emacs),
            [
                "--batch", "-Q",
                "-l", root.appendingPathComponent("Samples/editors/emacs/sqlive-eglot.el").path,
                "-l", EditorClientTests.clients.appendingPathComponent("emacs/test-eglot.el").path,
            ],
            in: directory.url,
            environment: [
                "SQLIVE_BIN": SQLiveBinary.path, "SQLIVE_DIR": directory.url.path,
                // Nothing of the user's: no ~/.emacs.d is read or written.
                "HOME": directory.url.path,
            ],
            limit: .seconds(240))
        #expect(status == 0, "Emacs failed:\n\(output)")
        #expect(output.contains("ok: the sqlite3 shell creating the table clears it"), "\(output)")
        #expect(output.contains("PASS"), "\(output)")
    }
}

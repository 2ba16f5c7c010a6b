import CReadline
import Foundation
import SQLiveLocks

/// GNU readline, in its callback interface: the only type that touches readline.
///
/// The interactive loop owns one editor and calls it from its thread only.
/// Readline never blocks: the loop polls standard input and calls
/// `readCharacter()` when a key arrives, so it can also print live-query
/// updates above the prompt (`printAbove`) without losing the line being
/// typed.
///
/// Readline's C callbacks cannot capture context: they reach the editor's
/// state through `callbackState`, a mutex-guarded static.
final class LineEditor {
    /// What the C callbacks read and write.
    private struct CallbackState {
        /// Lines accepted (`nil` for end of input), not yet taken.
        var lines: [ScriptText?] = []
        var completer: Completer?
        /// Reads a fresh schema when the schema changed since the
        /// completer's was read.
        var schemaSource: (@Sendable () -> CompletionSchema?)?
        var schemaGeneration: SchemaGeneration?
        /// The generation the completer's schema was read at.
        var readGeneration = 0
        /// The earlier lines of the statement being typed.
        var pendingText = ""
        /// Ctrl-L: clears under the live panel; false when there is none.
        var clearScreen: (@Sendable () -> Bool)?
    }
    private static let callbackState = Locked(CallbackState())

    private(set) var isInstalled = false
    /// Whether clear-screen's and clear-display's keys were bound to ours.
    private var clearScreenBound = false
    /// The screen size readline was last given.
    private var screenSize: Terminal.Size?
    private var history = History()
    private let historyPath: String?

    init() {
        sqlive_rl_set_readline_name("sqlive")
        sqlive_rl_set_catch_signals(0)
        sqlive_rl_set_catch_sigwinch(0)
        sqlive_rl_set_change_environment(0)
        sqlive_rl_set_basic_word_break_characters(wordBreaks)
        sqlive_rl_set_attempted_completion_function(lineEditorComplete)
        using_history()
        historyPath = History.path()
        loadHistory()
    }

    /// Readline keeps the pointer, so it is never freed (there is one editor per process).
    private let wordBreaks = strdup(Completer.wordBreakCharacters)

    // MARK: - Reading lines

    /// Shows the prompt and starts reading a line.
    func install(prompt: String) {
        if isInstalled { rl_callback_handler_remove() }
        rl_callback_handler_install(prompt, lineEditorAcceptLine)
        isInstalled = true
        if !clearScreenBound {
            // After the first install: readline has read ~/.inputrc.
            sqlive_rl_rebind(rl_clear_screen, lineEditorClearScreen)
            sqlive_rl_rebind(rl_clear_display, lineEditorClearDisplay)
            clearScreenBound = true
        }
    }

    /// Stops reading (while a command runs, and at exit); the terminal returns to its normal mode.
    func remove() {
        guard isInstalled else { return }
        rl_callback_handler_remove()
        isInstalled = false
    }

    /// Reads the available character(s) from standard input.
    func readCharacter() {
        rl_callback_read_char()
    }

    /// The lines accepted since the last call (`nil` is end of input).
    ///
    /// Accepting a line removes the handler, so the prompt is not shown
    /// again before the command ran: call `install` for the next line.
    func takeLines() -> [ScriptText?] {
        let lines = Self.callbackState.withLock { state in
            defer { state.lines.removeAll() }
            return state.lines
        }
        if !lines.isEmpty { isInstalled = false }
        return lines
    }

    fileprivate static func accept(_ line: UnsafeMutablePointer<CChar>?) {
        // Bytes as typed: a terminal that is not UTF-8 sends other bytes.
        let text = line.map { ScriptText(bytes: UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
        free(line)
        callbackState.withLock { $0.lines.append(text) }
        rl_callback_handler_remove()
    }

    // MARK: - Printing while the user types

    /// Prints above the prompt, then redraws the prompt and the partial line.
    func printAbove(_ body: () -> Void) {
        guard isInstalled else {
            body()
            return
        }
        rl_clear_visible_line()
        sqlive_rl_flush_output()
        body()
        rl_on_new_line()
        rl_redisplay()
    }

    /// Ctrl-C at the prompt: shows `^C`, drops the line, and shows a fresh prompt.
    func cancelLine(prompt: String) {
        guard isInstalled else { return }
        rl_callback_sigcleanup()
        sqlive_rl_set_point(sqlive_rl_end())
        rl_redisplay()
        sqlive_rl_output("^C\r\n")
        rl_replace_line("", 1)
        rl_callback_handler_remove()
        isInstalled = false
        install(prompt: prompt)
    }

    /// Redraws the prompt and the partial line after `body` moved the
    /// cursor to the start of a fresh line, without clearing first (the
    /// screen was started over).
    func redraw(after body: () -> Void) {
        body()
        guard isInstalled else { return }
        rl_on_new_line()
        rl_redisplay()
    }

    /// The session ends while the prompt shows (a termination signal): the
    /// line is left as typed and the cursor goes under it, so that what
    /// comes next (the shell's prompt) starts on a line of its own.
    func finishLine() {
        guard isInstalled else { return }
        sqlive_rl_set_point(sqlive_rl_end())
        rl_redisplay()
        sqlive_rl_output("\r\n")
    }

    /// The terminal was resized.
    func resize() {
        rl_resize_terminal()
        screenSize = nil
    }

    /// The rows and columns readline may use: the rows under the live
    /// panel, when it is shown (completion lists are paged to them).
    func setScreenSize(_ size: Terminal.Size?) {
        guard let size, size != screenSize else { return }
        rl_set_screen_size(Int32(size.rows), Int32(size.columns))
        screenSize = size
    }

    /// What Ctrl-L does first: `handler` clears under the live panel and
    /// returns true, or returns false and readline clears the screen.
    func setClearScreen(_ handler: @escaping @Sendable () -> Bool) {
        Self.callbackState.withLock { $0.clearScreen = handler }
    }

    /// clear-screen (Ctrl-L) or clear-display (M-C-l): with the live
    /// panel, the rows under it are cleared and the panel stays; without,
    /// readline's own `command` runs.
    fileprivate static func clearScreen(
        count: Int32, key: Int32, command: @convention(c) (Int32, Int32) -> Int32
    ) -> Int32 {
        let handler = callbackState.withLock { $0.clearScreen }
        guard let handler, handler() else { return command(count, key) }
        rl_forced_update_display()
        return 0
    }

    // MARK: - Completion

    /// What Tab completes with, and the earlier lines of the statement.
    ///
    /// - parameter generation: Counts the schema's changes; the completer
    ///   (read at its current count) reads the schema again from `schemaSource`
    ///   when it moves while the line is edited (another process may change it).
    func setCompletion(
        _ completer: Completer, pendingText: String, schemaSource: (@Sendable () -> CompletionSchema?)?,
        generation: SchemaGeneration?, readAt: Int?
    ) {
        Self.callbackState.withLock { state in
            state.completer = completer
            state.pendingText = pendingText
            state.schemaSource = schemaSource
            state.schemaGeneration = generation
            // The count the completer's schema was read at (a change since
            // makes the next Tab read it again); -1 when unknown.
            state.readGeneration = readAt ?? -1
        }
    }

    /// The completer, with its schema read again if it changed since.
    private static func currentCompleter() -> Completer? {
        let (completer, source, generation, read) = callbackState.withLock {
            ($0.completer, $0.schemaSource, $0.schemaGeneration, $0.readGeneration)
        }
        guard var completer, let source, let now = generation?.current, now != read else { return completer }
        if let schema = source() { completer.schema = schema }
        callbackState.withLock { state in
            state.completer = completer
            state.readGeneration = now
        }
        return completer
    }

    fileprivate static func complete(
        _ text: UnsafePointer<CChar>?, start: Int32, end: Int32
    ) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        sqlive_rl_set_attempted_completion_over(1)
        let pending = callbackState.withLock { $0.pendingText }
        guard let completer = currentCompleter(), let buffer = sqlive_rl_line_buffer() else { return nil }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: Int(end))
        let line = String(decoding: bytes, as: UTF8.self)
        let before = pending.isEmpty ? line : pending + "\n" + line
        let word = String(Completer.word(before: before))
        let completions = completer.complete(before: before)
        let candidates = completions.candidates
        guard !candidates.isEmpty else { return nil }
        sqlive_rl_set_completion_append_character(completions.appendSpace ? 0x20 : 0)

        var substitution = candidates.count == 1 ? candidates[0] : commonPrefix(candidates)
        if substitution.count < word.count { substitution = word }
        let entries = [substitution] + (candidates.count == 1 ? [] : candidates)
        let matches = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: entries.count + 1)
        for (index, entry) in entries.enumerated() { matches[index] = strdup(entry) }
        matches[entries.count] = nil
        return matches
    }

    private static func commonPrefix(_ strings: [String]) -> String {
        guard var prefix = strings.first.map(Array.init) else { return "" }
        for string in strings.dropFirst() {
            let characters = Array(string)
            var length = 0
            while length < min(prefix.count, characters.count),
                prefix[length].lowercased() == characters[length].lowercased()
            {
                length += 1
            }
            prefix = Array(prefix.prefix(length))
        }
        return String(prefix)
    }

    // MARK: - History

    private func loadHistory() {
        guard let historyPath else { return }
        let directory = (historyPath as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: historyPath) {
                _ = FileManager.default.createFile(atPath: historyPath, contents: nil)
            }
        } catch {
            FileHandle.standardError.write(Data("sqlive: history disabled: \(error.localizedDescription)\n".utf8))
            return
        }
        history_truncate_file(historyPath, 2000)
        read_history(historyPath)
        let text = (try? String(contentsOfFile: historyPath, encoding: .utf8)) ?? ""
        history = History(lastEntry: text.split(separator: "\n").last.map(String.init))
    }

    /// Records a command in the history, at once in the file too.
    func record(_ command: String) {
        guard let entry = history.entry(for: command) else { return }
        add_history(entry)
        if let historyPath {
            append_history(1, historyPath)
        }
    }
}

/// readline's line handler: a C function, so it cannot be a closure.
private func lineEditorAcceptLine(_ line: UnsafeMutablePointer<CChar>?) {
    LineEditor.accept(line)
}

/// clear-screen's replacement (Ctrl-L), which keeps the live panel.
private func lineEditorClearScreen(_ count: Int32, _ key: Int32) -> Int32 {
    LineEditor.clearScreen(count: count, key: key, command: rl_clear_screen)
}

/// clear-display's replacement (M-C-l), which keeps the live panel.
private func lineEditorClearDisplay(_ count: Int32, _ key: Int32) -> Int32 {
    LineEditor.clearScreen(count: count, key: key, command: rl_clear_display)
}

/// readline's completion function.
private func lineEditorComplete(
    _ text: UnsafePointer<CChar>?, _ start: Int32, _ end: Int32
) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
    LineEditor.complete(text, start: start, end: end)
}

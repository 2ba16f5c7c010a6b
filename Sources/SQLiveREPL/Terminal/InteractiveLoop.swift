import Foundation

/// The interactive REPL: an event loop over standard input and the wake pipe.
///
/// `poll` waits for a key or a wake-up. A key goes to readline; a complete
/// line goes to the input accumulator, and a complete command runs (the
/// prompt is hidden meanwhile). A wake-up redraws the live panel in place
/// (or prints live-query updates above the prompt), clears the line after
/// Ctrl-C, or follows a window resize. Readline is told the rows under the
/// panel, and at exit the panel goes and the scroll region is reset.
struct InteractiveLoop {
    static let prompt = "sqlive> "
    static let continuationPrompt = "   ...> "

    let session: Session
    private let editor = LineEditor()

    init(session: Session) {
        self.session = session
    }

    func run() {
        var input = InputAccumulator()
        var lineNumber = 0
        var prompt: String { input.isEmpty ? session.prompts.main : session.prompts.continuation }

        let signalSources = session.signals.install(resizes: true)
        defer { for source in signalSources { source.cancel() } }
        let panel = session.panel
        // Output above the prompt, or a change of the panel's height: the
        // line is cleared, then redrawn with readline told the rows it has.
        let aroundLine: (() -> Void) -> Void = { body in
            editor.printAbove {
                body()
                editor.setScreenSize(panel.readlineSize)
            }
        }
        session.printEvents(around: aroundLine)
        editor.setClearScreen { panel.clearUnder() }
        editor.setCompletion(
            session.completer(), pendingText: "", schemaSource: CompletionCache.source(for: session.database),
            generation: session.completion.generation, readAt: session.completion.readGeneration)
        editor.setScreenSize(panel.readlineSize)
        editor.install(prompt: prompt)
        defer {
            editor.finishLine()
            editor.remove()
            // The panel goes, and the scroll region is the whole screen again.
            session.releaseTerminal()
        }

        while !session.isFinished {
            var descriptors = [
                pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
                pollfd(fd: session.wake.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if descriptors[1].revents != 0 {
                session.wake.drain()
                if session.signals.takeResize() {
                    if panel.isShown {
                        // The panel starts over on a fresh screen; the line follows.
                        editor.redraw {
                            session.printEvents()
                            editor.setScreenSize(panel.readlineSize)
                        }
                    } else if panel.isDisplayable {
                        editor.resize()
                        session.printEvents(around: aroundLine)
                    } else {
                        editor.resize()
                    }
                }
                if session.signals.takeInterrupt() {
                    input.reset()
                    editor.cancelLine(prompt: prompt)
                }
                if session.hasPendingEvents {
                    session.printEvents(around: aroundLine)
                }
            }
            guard descriptors[0].revents != 0 else { continue }
            editor.readCharacter()
            for line in editor.takeLines() {
                guard let line else {
                    // Ctrl-D on an empty line: as sqlite3, a statement
                    // begun and not ended runs as it is (its error, if
                    // incomplete, said), then the session ends.
                    session.write("\n")
                    if let unit = input.finish() { session.run(unit) }
                    return
                }
                lineNumber += 1
                if let unit = input.add(line, lineNumber: lineNumber) {
                    switch unit {
                    case .dotCommand(let text, _), .sql(let text, _):
                        editor.record(text.description)
                    }
                    session.run(unit)
                    session.completion.invalidate()
                }
                if session.isFinished { return }
            }
            if !editor.isInstalled {
                editor.setCompletion(
                    session.completer(), pendingText: input.pendingText,
                    schemaSource: CompletionCache.source(for: session.database),
                    generation: session.completion.generation, readAt: session.completion.readGeneration)
                editor.setScreenSize(panel.readlineSize)
                editor.install(prompt: prompt)
            }
        }
    }
}

#ifndef SQLIVE_CREADLINE_SHIM_H
#define SQLIVE_CREADLINE_SHIM_H

// <stdio.h> must come before readline's headers, which use FILE.
#include <stdio.h>
#include <stdlib.h>
#include <readline/readline.h>
#include <readline/history.h>

// Swift 6 refuses direct access to mutable C globals. These accessors are
// the only way sqlive's LineEditor reads and writes readline's state.

static inline const char *sqlive_rl_line_buffer(void) { return rl_line_buffer; }
static inline int sqlive_rl_point(void) { return rl_point; }
static inline void sqlive_rl_set_point(int point) { rl_point = point; }
static inline int sqlive_rl_end(void) { return rl_end; }
static inline void sqlive_rl_set_done(int done) { rl_done = done; }
static inline void sqlive_rl_set_readline_name(const char *name) { rl_readline_name = name; }
static inline void sqlive_rl_set_catch_signals(int value) { rl_catch_signals = value; }
static inline void sqlive_rl_set_catch_sigwinch(int value) { rl_catch_sigwinch = value; }
static inline void sqlive_rl_set_attempted_completion_function(rl_completion_func_t *function) {
    rl_attempted_completion_function = function;
}
static inline void sqlive_rl_set_completion_entry_function(rl_compentry_func_t *function) {
    rl_completion_entry_function = function;
}
static inline void sqlive_rl_set_attempted_completion_over(int value) { rl_attempted_completion_over = value; }
static inline void sqlive_rl_set_basic_word_break_characters(const char *chars) {
    rl_basic_word_break_characters = chars;
}
static inline void sqlive_rl_set_completer_quote_characters(const char *chars) {
    rl_completer_quote_characters = chars;
}
static inline void sqlive_rl_set_completion_append_character(int c) { rl_completion_append_character = c; }
static inline int sqlive_rl_completion_append_character(void) { return rl_completion_append_character; }
static inline void sqlive_rl_set_filename_completion_desired(int v) { rl_filename_completion_desired = v; }
static inline int sqlive_history_length(void) { return history_length; }
static inline void sqlive_rl_set_outstream(FILE *stream) { rl_outstream = stream; }
// Readline must not export LINES and COLUMNS (setenv races with other threads' getenv).
static inline void sqlive_rl_set_change_environment(int value) { rl_change_environment = value; }

// Binds `function` to every key sequence bound to `command` (clear-screen:
// Ctrl-L, clear-display: M-C-l, and whatever ~/.inputrc added) in the
// current keymap; call it once, after readline read ~/.inputrc (its first
// rl_callback_handler_install).
static inline void sqlive_rl_rebind(rl_command_func_t *command, rl_command_func_t *function) {
    char **sequences = rl_invoking_keyseqs(command);
    if (!sequences) {
        return;
    }
    for (int i = 0; sequences[i]; i++) {
        rl_bind_keyseq(sequences[i], function);
        free(sequences[i]);
    }
    free(sequences);
}
static inline void sqlive_rl_set_instream(FILE *stream) { rl_instream = stream; }

// Writes to readline's output stream (standard output by default) and flushes it.
static inline void sqlive_rl_output(const char *text) {
    FILE *stream = rl_outstream ? rl_outstream : stdout;
    fputs(text, stream);
    fflush(stream);
}
static inline void sqlive_rl_flush_output(void) { fflush(rl_outstream ? rl_outstream : stdout); }

#endif

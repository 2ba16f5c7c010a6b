#!/usr/bin/env bash
# Checks an installed sqlive package (after `dpkg -i`), as a user without a
# Swift toolchain would meet it: the binary runs with nothing but the system
# on PATH, a live query sees another process's write, `man sqlive` renders,
# and the shells' completions load.
#
#   scripts/check-package.sh
set -euo pipefail

plain=(env -i PATH=/usr/bin:/bin HOME=/tmp LANG=C.UTF-8)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check-package: $*" >&2; exit 1; }

[ -x /usr/bin/sqlive ] || fail "/usr/bin/sqlive is not installed"
"${plain[@]}" /usr/bin/sqlive --sqlive-version >/dev/null || fail "sqlive --version failed"
if ldd /usr/bin/sqlive | grep -qi -e swift -e foundation; then
    fail "the installed binary links a Swift library: $(ldd /usr/bin/sqlive | grep -i -e swift -e foundation)"
fi
if "${plain[@]}" sh -c 'command -v swift' >/dev/null; then
    fail "a Swift toolchain is on the plain PATH: the check would prove nothing"
fi
echo "ok: sqlive $("${plain[@]}" /usr/bin/sqlive --sqlive-version) runs with no Swift toolchain on PATH"

# A live query that sees another process's write (the sqlite3 shell).
sqlite3 "$work/db.sqlite" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
printf '.watch n SELECT count(*) FROM t\n.wait n --timeout 30\n' |
    "${plain[@]}" /usr/bin/sqlive "$work/db.sqlite" >"$work/out" 2>&1 &
session=$!
for _ in $(seq 1 300); do
    grep -q -- "-- n v1" "$work/out" && break
    sleep 0.1
done
grep -q -- "-- n v1" "$work/out" || fail "the live query did not start: $(cat "$work/out")"
sqlite3 "$work/db.sqlite" "INSERT INTO t VALUES (2);"
wait "$session" || fail "the session failed: $(cat "$work/out")"
grep -q -- "-- n v2 (external" "$work/out" || fail "the live query missed the write: $(cat "$work/out")"
echo "ok: an installed sqlive's live query sees the sqlite3 shell's write"

# The manual page, as man renders it.
page=$("${plain[@]}" MANPAGER=cat man sqlive 2>/dev/null) || fail "man sqlive failed"
for word in "--mcp" "--lsp" ".watch" ".explain" "DOT-COMMANDS"; do
    grep -qF -- "$word" <<<"$page" || fail "man sqlive does not mention $word"
done
echo "ok: man sqlive renders, options and dot-commands included"

# Completions.
"${plain[@]}" bash -c 'source /usr/share/bash-completion/completions/sqlive && complete -p sqlive' >/dev/null ||
    fail "the bash completion does not load"
if command -v zsh >/dev/null; then
    "${plain[@]}" zsh -c 'autoload -U compinit && compinit -u && source /usr/share/zsh/vendor-completions/_sqlive' ||
        fail "the zsh completion does not load"
fi
if command -v fish >/dev/null; then
    "${plain[@]}" fish -c 'source /usr/share/fish/vendor_completions.d/sqlive.fish; complete -C "sqlive --mc"' |
        grep -q -- "--mcp" || fail "the fish completion does not complete --mcp"
fi
echo "ok: the completions load (bash$(command -v zsh >/dev/null && echo ", zsh")$(command -v fish >/dev/null && echo ", fish"))"

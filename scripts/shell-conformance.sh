#!/usr/bin/env bash
# SQLite's own shell tests (test/shell1.test .. shell7.test of SQLite 3.40.1,
# the version of Debian bookworm's sqlite3), run once with the installed
# sqlite3 and once with sqlive, compared case by case.
#
#   scripts/shell-conformance.sh [--update] [--sqlive PATH] [--sqlite3 PATH]
#                                [--out DIR] [--timeout SECONDS] [--file-timeout SECONDS]
#                                [--files "1 2 ..."]
#
#   --update        rewrite Tests/ShellConformance/known-failures.txt with the
#                   cases sqlive fails now (that sqlite3 passes), and exit 0
#   --sqlive PATH   the sqlive binary (default: .build/debug/sqlive)
#   --sqlite3 PATH  the reference CLI (default: sqlite3 on PATH)
#   --out DIR       where the scratch directories and reports go
#                   (default: /tmp/sqlive-shell-conformance; emptied first, so
#                   it must be new, empty, or made by an earlier run)
#   --timeout N     seconds allowed to one CLI invocation (default 60); a test
#                   file as a whole gets --file-timeout seconds (default 180)
#   --files LIST    which shellN.test to run (default "1 2 3 4 5 6 7")
#
# SQLite's test files are never part of this repository: they are fetched at
# run time from Debian's source package (apt-get source --download-only
# sqlite3) into $SQLITE_SRC_CACHE (default /tmp/sqlive-sqlite-src), and the
# test directory of its upstream tarball is unpacked there. The Tcl binding
# (libsqlite3-tcl), tclsh and sqlite3 are installed with apt-get if missing.
#
# Each CLI's run has a scratch directory of its own holding an executable
# named "sqlite3" (a wrapper that runs the CLI under `timeout`), where
# tester.tcl finds it; Tests/ShellConformance/run-test-file.tcl runs each test
# file there under tclsh with stubs for testfixture's commands, and
# Tests/ShellConformance/report.tcl compares the results.
#
# Output, in DIR: results.tsv (one line per case: file, case, sqlite3's and
# sqlive's outcome, expected and actual values of sqlive's failures),
# failures.md (each case sqlive fails that sqlite3 passes: the test's script,
# the expected and actual values, and each CLI call's output under both
# CLIs), and the raw per-file results and logs under sqlite3/ and sqlive/.
#
# Exit status: 0 when every case that sqlive fails (and sqlite3 passes) is
# listed in Tests/ShellConformance/known-failures.txt; 1 when a case not on
# that list fails (a regression); 2 on a usage or set-up error. Listed cases
# that now pass are printed, so that the list can be trimmed (--update).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
here="$root/Tests/ShellConformance"
known="$here/known-failures.txt"
version=3.40.1
cache="${SQLITE_SRC_CACHE:-/tmp/sqlive-sqlite-src}"

update=0
sqlive="$root/.build/debug/sqlive"
sqlite3_cli=""
out=/tmp/sqlive-shell-conformance
call_timeout=60
file_timeout=180
files="1 2 3 4 5 6 7"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --update) update=1 ;;
        --sqlive) sqlive="$2"; shift ;;
        --sqlite3) sqlite3_cli="$2"; shift ;;
        --out) out="$2"; shift ;;
        --timeout) call_timeout="$2"; shift ;;
        --file-timeout) file_timeout="$2"; shift ;;
        --files) files="$2"; shift ;;
        -h|--help) usage ;;
        *) echo "shell-conformance: unknown option: $1" >&2; usage ;;
    esac
    shift
done

say() { echo "shell-conformance: $*" >&2; }
die() { say "$*"; exit 2; }

# --- Tools: tclsh, the Tcl binding of SQLite, the sqlite3 CLI ---------------
apt_updated=0
apt_update() {
    if [ "$apt_updated" = 0 ]; then
        apt-get update -qq || die "apt-get update failed"
        apt_updated=1
    fi
}
need=()
command -v tclsh >/dev/null 2>&1 || need+=(tcl)
[ -f /usr/share/tcltk/tcl8.6/sqlite3/pkgIndex.tcl ] ||
    dpkg -s libsqlite3-tcl >/dev/null 2>&1 || need+=(libsqlite3-tcl)
[ -n "$sqlite3_cli" ] || command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing packages (run as root, or install them): ${need[*]}"
    say "installing: ${need[*]}"
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
        die "apt-get install ${need[*]} failed"
fi
echo 'package require sqlite3' | tclsh >/dev/null 2>&1 ||
    die "tclsh cannot load the sqlite3 package (libsqlite3-tcl)"

[ -n "$sqlite3_cli" ] || sqlite3_cli="$(command -v sqlite3)"
sqlite3_cli="$(readlink -f "$sqlite3_cli")"
[ -x "$sqlite3_cli" ] || die "no sqlite3 at $sqlite3_cli"
case "$("$sqlite3_cli" -version </dev/null)" in
    "$version "*) ;;
    *) say "warning: $sqlite3_cli is not SQLite $version: $("$sqlite3_cli" -version </dev/null)" ;;
esac
[ -x "$sqlive" ] || die "no sqlive binary at $sqlive (build it, or pass --sqlive PATH)"
sqlive="$(readlink -f "$sqlive")"

# --- SQLite's tests, from Debian's source package -----------------------------
testdir="$cache/sqlite3-$version/test"
have_tests() {
    for n in $files; do [ -f "$testdir/shell$n.test" ] || return 1; done
    [ -f "$testdir/tester.tcl" ]
}
if ! have_tests; then
    mkdir -p "$cache"
    orig="$cache/sqlite3_$version.orig.tar.xz"
    if [ ! -f "$orig" ]; then
        if ! grep -rqsE '^(deb-src |Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
            [ "$(id -u)" = 0 ] || die "no deb-src line in /etc/apt; run as root to add one"
            say "adding a deb-src line: /etc/apt/sources.list.d/debian-src.sources"
            cat >/etc/apt/sources.list.d/debian-src.sources <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
            # A new source list: its index is fetched even if the tools'
            # install above updated the others already.
            apt_updated=0
            apt_update
        fi
        say "fetching Debian's sqlite3 source package into $cache"
        if ! (cd "$cache" && apt-get source --download-only -qq sqlite3 >/dev/null 2>&1); then
            apt_updated=0
            apt_update
            (cd "$cache" && apt-get source --download-only -qq sqlite3 >/dev/null) ||
                die "apt-get source --download-only sqlite3 failed"
        fi
        [ -f "$orig" ] || die "the source package has no sqlite3_$version.orig.tar.xz (another version?): $(ls "$cache")"
    fi
    tar -xJf "$orig" -C "$cache" --wildcards "sqlite3-$version/test/shell*.test" \
        "sqlite3-$version/test/tester.tcl" "sqlite3-$version/test/thread_common.tcl" \
        "sqlite3-$version/test/malloc_common.tcl" ||
        die "cannot unpack the tests from $orig"
    have_tests || die "the tests are missing from $orig"
fi

# --- Runs ----------------------------------------------------------------------
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -f "$out/.shell-conformance" ]; then
    die "$out is not empty and was not made by this script; pass another --out"
fi
rm -rf "$out"
mkdir -p "$out"
touch "$out/.shell-conformance"

# run_cli LABEL PATH: every test file, in a scratch directory of its own,
# with an executable "sqlite3" there that runs PATH under a timeout.
run_cli() {
    local label="$1" cli="$2" dir="$out/$1" n start
    mkdir -p "$dir"
    for n in $files; do
        local scratch="$dir/shell$n"
        mkdir -p "$scratch/home"
        printf '#!/bin/sh\nexec timeout -k 5 %s %q "$@"\n' "$call_timeout" "$cli" >"$scratch/sqlite3"
        chmod +x "$scratch/sqlite3"
        start=$SECONDS
        # A clean environment: no ~/.sqliterc, history or terminal settings of
        # whoever runs this; stdin is /dev/null (shell4's --interactive reads it).
        (cd "$scratch" && env -i PATH="/usr/local/bin:/usr/bin:/bin" HOME="$scratch/home" \
            LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb TZ=UTC TMPDIR="${TMPDIR:-/tmp}" \
            timeout -k 10 "$file_timeout" tclsh "$here/run-test-file.tcl" \
            "$testdir/shell$n.test" "$dir/shell$n.tsv" \
            </dev/null >"$dir/shell$n.log" 2>&1) || {
            local rc=$?
            [ $rc -eq 124 ] || [ $rc -eq 137 ] &&
                echo "shell$n.test: TIMED OUT after ${file_timeout}s" >>"$dir/shell$n.log"
            true
        }
        echo "  $label shell$n.test: $(tail -n 1 "$dir/shell$n.log") ($((SECONDS - start))s)" >&2
    done
}
say "running with sqlite3 ($sqlite3_cli)"
run_cli sqlite3 "$sqlite3_cli"
say "running with sqlive ($sqlive)"
run_cli sqlive "$sqlive"

args=(--files "$files" --out "$out" --known "$known")
[ "$update" = 1 ] && args+=(--update)
exec tclsh "$here/report.tcl" "${args[@]}"

#!/usr/bin/env bash
# Runs the whole test suite under ThreadSanitizer and AddressSanitizer.
#
#   scripts/sanitize.sh                 # both, one after the other
#   scripts/sanitize.sh thread          # one of: thread, address
#
# Each sanitizer builds into its own directory (.build-thread,
# .build-address), so the normal debug build is left alone; the tests find
# the sanitized `sqlive` binary next to their bundle, so the processes they
# start are checked too. Any sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitizers=("$@")
[ ${#sanitizers[@]} -gt 0 ] || sanitizers=(thread address)

for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
        thread | address) ;;
        *) echo "unknown sanitizer: $sanitizer (use thread or address)" >&2; exit 2 ;;
    esac
    scratch=".build-$sanitizer"
    log="$scratch/sanitize-test.log"
    echo "== $sanitizer: building into $scratch"
    start=$(date +%s)
    swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch"
    built=$(date +%s)
    echo "== $sanitizer: built in $((built - start)) s; testing"
    # The child processes the tests start report to their standard error,
    # which the tests capture: ask them to write reports to files as well.
    reports="$scratch/reports"
    rm -rf "$reports" && mkdir -p "$reports"
    export TSAN_OPTIONS="halt_on_error=0 log_path=$PWD/$reports/tsan ${TSAN_OPTIONS:-}"
    export ASAN_OPTIONS="detect_leaks=0 log_path=$PWD/$reports/asan ${ASAN_OPTIONS:-}"
    export SQLIVE_SANITIZER="$sanitizer"
    status=0
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | tee "$log" || status=$?
    echo "== $sanitizer: tests took $(($(date +%s) - built)) s, exit $status"
    if compgen -G "$reports/*" >/dev/null; then
        echo "== $sanitizer: reports in $reports:" >&2
        head -n 60 "$reports"/* >&2
        status=1
    fi
    [ "$status" -eq 0 ] || exit "$status"
done
echo "== no sanitizer reports"

# Runs one of SQLite's shell tests (test/shellN.test) under a plain tclsh with
# Debian's Tcl binding (libsqlite3-tcl) in place of SQLite's testfixture, and
# writes one line per test case to a results file.
#
#   tclsh run-test-file.tcl TESTFILE RESULTS
#
# Run it from a scratch directory holding an executable named "sqlite3": the
# CLI under test. tester.tcl finds the CLI there itself (test_find_binary looks
# in the directory tclsh started in), and cds into ./testdir before the tests
# run. scripts/shell-conformance.sh makes that directory and that executable (a
# wrapper that runs the real sqlite3 or sqlive under a timeout).
#
# What this file adds is a prelude of stubs for the testfixture-only commands
# that tester.tcl calls while it loads or finishes (memory debugging, fault
# injection, test controls), and hooks on do_test and fail_test that record
# each case's name, outcome, expected value and actual value. Nothing here
# changes what a test runs or how do_test compares its result: the hooks wrap
# tester.tcl's own do_test and fail_test, which still do the work.
#
# Results, one line per case, tab-separated, with backslash, tab, newline and
# carriage return escaped as \\ \t \n \r:
#
#   NAME  STATUS  EXPECTED  GOT  SCRIPT  CALLS
#
# STATUS is "pass", "fail" (the result differed from the expected one) or
# "error" (the test's script raised a Tcl error; GOT holds the message). A
# test file that stops outside any case (a Tcl error in its own set-up code)
# adds a line "<file>:abort  abort  {}  MESSAGE"; the cases after that point
# are then missing from the results. SCRIPT is the case's Tcl script; CALLS
# is a Tcl list of the CLI calls it made through catchcmd or catchcmdex, each
# {ARGUMENTS INPUT RC OUTPUT}. Lines are flushed as they are written, so
# a run killed by the harness's time limit keeps the cases it finished.

if {[llength $argv] != 2} {
  puts stderr "usage: tclsh run-test-file.tcl TESTFILE RESULTS"
  exit 2
}
set sqlive_conf(testfile) [file normalize [lindex $argv 0]]
set sqlive_conf(results) [file normalize [lindex $argv 1]]
set sqlive_conf(out) [open $sqlive_conf(results) w]
fconfigure $sqlive_conf(out) -encoding utf-8 -translation lf -buffering line

package require sqlite3

# ---------------------------------------------------------------------------
# Stubs for testfixture's commands. Each one is something tester.tcl (or the
# two files it sources) calls at load or finish time; none of them is called
# by a shell test's own cases. They do nothing, or return what the shipped
# library would report.
# ---------------------------------------------------------------------------
foreach sqlive_stub {
  sqlite3_test_control_pending_byte sqlite3_shutdown install_malloc_faultsim
  sqlite3_initialize autoinstall_test_functions sqlite3_config_memstatus
  sqlite3_memdebug_settitle sqlite3_memdebug_log sqlite3_memdebug_backtrace
  sqlite3_memdebug_dump database_never_corrupt database_may_be_corrupt
  extra_schema_checks vfs_unlink_test sqlite3_reset_auto_extension
  sqlite3_clear_tsd_memdebug vdbe_coverage
} {
  proc $sqlive_stub {args} {return ""}
}
proc sqlite3_soft_heap_limit64 {args} {return 0}
proc sqlite3_hard_heap_limit64 {args} {return 0}
proc sqlite3_memory_used {args} {return 0}
proc sqlite3_status {args} {return {0 0 0}}
proc sqlite3_connection_pointer {db} {return $db}
set sqlite_open_file_count 0

# ifcapable/capable read the ::sqlite_options array (testfixture fills it from
# the library's compile-time options). The shell tests ask for "vtab" and
# "trace"; the values come from the linked library's compile options (an
# OMIT_X option turns capability "x" off), the same library Debian's sqlite3
# is linked with. A capability the library does not mention counts as present.
sqlite3 sqlive_probe :memory:
set sqlive_conf(compile_options) [sqlive_probe eval {PRAGMA compile_options}]
sqlive_probe close
# tester.tcl itself reads memdebug, builtin_test and default_autovacuum (no
# shell test depends on them).
set sqlite_options(memdebug) 0
set sqlite_options(builtin_test) 0
set sqlite_options(default_autovacuum) 0
foreach sqlive_opt $sqlive_conf(compile_options) {
  if {[regexp {^OMIT_([A-Z0-9_]+)$} $sqlive_opt -> sqlive_cap]} {
    set sqlite_options([string tolower $sqlive_cap]) 0
  }
}
# ifcapable expressions such as "vtab" become "$::sqlite_options(vtab)": a
# capability not set above reads as present.
trace add variable sqlite_options read sqlive_default_option
proc sqlive_default_option {name key op} {
  if {$key ne "" && ![info exists ::sqlite_options($key)]} {
    set ::sqlite_options($key) 1
  }
}

# ---------------------------------------------------------------------------
# Load tester.tcl as the test file itself would (its "source tester.tcl" is
# then a no-op: tester.tcl returns at once when it has already run).
# ---------------------------------------------------------------------------
set argv0 $sqlive_conf(testfile)
set argv {}
set argc 0
set testdir [file dirname $argv0]
source $testdir/tester.tcl

proc sqlive_escape {s} {
  string map [list \\ \\\\ \t \\t \n \\n \r \\r] $s
}
proc sqlive_record {name status expected got {script ""} {calls ""}} {
  puts $::sqlive_conf(out) [join [list [sqlive_escape $name] $status \
      [sqlive_escape $expected] [sqlive_escape $got] \
      [sqlive_escape $script] [sqlive_escape $calls]] \t]
}

# do_test: run tester.tcl's own do_test; fail_test (below) notes a failure
# with do_test's expected value and result, read from do_test's frame. A name
# used a second time in the same file (shell1-2.4.2, shell5-5.1, ...) is
# recorded as NAME#2, so that every case has a name of its own.
rename do_test sqlive_tester_do_test
proc do_test {name cmd expected} {
  set ::sqlive_case [list pass "" ""]
  set ::sqlive_calls {}
  set recname $name
  fix_testname recname
  set code [catch {uplevel 1 [list sqlive_tester_do_test $name $cmd $expected]} msg opts]
  if {[info exists ::G(match)] && ![string match $::G(match) $recname]} {
    # not run (tester.tcl's --match): nothing to record
  } else {
    if {[incr ::sqlive_seen($recname)] > 1} {
      append recname "#$::sqlive_seen($recname)"
    }
    lassign $::sqlive_case status exp got
    if {$status eq "pass"} {set exp $expected}
    sqlive_record $recname $status $exp $got $cmd $::sqlive_calls
  }
  unset ::sqlive_case
  set ::sqlive_calls {}
  return -options $opts $msg
}
rename fail_test sqlive_tester_fail_test
proc fail_test {name} {
  if {[info exists ::sqlive_case]} {
    set exp [uplevel 1 {set expected}]
    set got [uplevel 1 {set result}]
    if {[uplevel 1 {info exists ok}]} {
      set ::sqlive_case [list fail $exp $got]
    } else {
      set ::sqlive_case [list error $exp $got]
    }
  }
  uplevel 1 [list sqlive_tester_fail_test $name]
}

# catchcmd and catchcmdex: tester.tcl's own, which also note each call (the
# CLI's arguments, its input, and what tester.tcl got back: the exit status
# flag and the output) so that a report can show both CLIs' outputs side by
# side. Calls outside any case are not kept.
set sqlive_calls {}
foreach sqlive_proc {catchcmd catchcmdex} {
  rename $sqlive_proc sqlive_tester_$sqlive_proc
  proc $sqlive_proc {db {cmd ""}} [string map [list @P@ $sqlive_proc] {
    set r [sqlive_tester_@P@ $db $cmd]
    if {[info exists ::sqlive_case]} {
      lappend ::sqlive_calls [list $db $cmd [lindex $r 0] [lindex $r 1]]
    }
    return $r
  }]
}

# finish_test closes the databases and calls finalize_testing, which in
# testfixture checks for leaks and exits; here it only prints the counts.
proc finalize_testing {} {
  catch {db close}
  puts "[set_test_counter errors] errors out of [set_test_counter count] tests"
  close $::sqlive_conf(out)
  exit 0
}

# ---------------------------------------------------------------------------
# Run the test file. A Tcl error outside any do_test ends the file early:
# that is recorded as an "abort" line.
# ---------------------------------------------------------------------------
if {[catch {uplevel #0 [list source $sqlive_conf(testfile)]} msg]} {
  sqlive_record "[file tail $sqlive_conf(testfile)]:abort" abort "" $msg
  puts "ABORTED: $msg"
  catch {db close}
  close $sqlive_conf(out)
  exit 1
}
# A test file that returns without finish_test.
close $sqlive_conf(out)
exit 0

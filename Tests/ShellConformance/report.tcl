# Compares the per-case results of SQLite's shell tests under sqlite3 and
# under sqlive (written by run-test-file.tcl), prints a summary, writes
# results.tsv and failures.md, and checks the known failures (the ratchet).
#
#   tclsh report.tcl --out DIR --files "1 2 ..." --known FILE [--update]
#
# DIR holds sqlite3/shellN.tsv and sqlive/shellN.tsv. Exit status: 0, or 1
# when a case that sqlite3 passes fails with sqlive and is not in FILE (with
# --update, FILE is rewritten instead and the exit status is 0).

array set opt {--out "" --files "1 2 3 4 5 6 7" --known "" --update 0}
for {set i 0} {$i < [llength $argv]} {incr i} {
  set a [lindex $argv $i]
  switch -- $a {
    --update {set opt(--update) 1}
    --out - --files - --known {set opt($a) [lindex $argv [incr i]]}
    default {puts stderr "report.tcl: unknown option $a"; exit 2}
  }
}

proc unescape {s} {
  string map [list \\\\ \\ \\t \t \\n \n \\r \r] $s
}

# load FILE: a dict NAME -> {status expected got script calls}, and the names
# in the order the cases ran.
proc load {path} {
  set cases [dict create]
  set order {}
  if {[file exists $path]} {
    set fd [open $path r]
    fconfigure $fd -encoding utf-8 -translation lf
    while {[gets $fd line] >= 0} {
      if {$line eq ""} continue
      set f [split $line \t]
      set name [unescape [lindex $f 0]]
      set rec [list [lindex $f 1]]
      foreach x [lrange $f 2 5] {lappend rec [unescape $x]}
      dict set cases $name $rec
      lappend order $name
    }
    close $fd
  }
  list $cases $order
}

# Text for Markdown fenced blocks: control characters other than newline and
# tab shown as \xNN.
proc visible {s} {
  set r ""
  foreach c [split $s ""] {
    scan $c %c code
    if {($code < 32 && $c ne "\n" && $c ne "\t") || $code == 127} {
      append r [format {\x%02X} $code]
    } else {
      append r $c
    }
  }
  return $r
}
proc fence {s} {
  return "~~~~\n[visible $s]\n~~~~\n"
}

set outdir $opt(--out)
set known {}
if {$opt(--known) ne "" && [file exists $opt(--known)]} {
  set fd [open $opt(--known) r]
  foreach line [split [read $fd] \n] {
    set line [string trim $line]
    if {$line eq "" || [string index $line 0] eq "#"} continue
    lappend known $line
  }
  close $fd
}

set tsv [open [file join $outdir results.tsv] w]
fconfigure $tsv -encoding utf-8 -translation lf
puts $tsv [join {file case sqlite3 sqlive expected got} \t]
set md [open [file join $outdir failures.md] w]
fconfigure $md -encoding utf-8 -translation lf
puts $md "# sqlive against SQLite 3.40.1's shell tests: failures\n"
puts $md "Each case below passes with sqlite3 and fails with sqlive. \"Expected\" is\
the value the test compares with (tester.tcl's do_test: exact, or a /regexp/ or\
*glob* pattern); \"got\" is what the test computed with sqlive. Under \"CLI\
calls\" is each invocation the case made through catchcmd (arguments, the\
standard input it fed, then the exit flag and output for each CLI). As in\
tester.tcl, the flag is 1 when the CLI exited non-zero or wrote to stderr;\
the output is stdout followed by stderr, less one trailing newline (Tcl's exec).\n"

set total_ref 0
set total_ok 0
set failing {}
set summary {}
set ref_failures {}
foreach n $opt(--files) {
  set file shell$n.test
  lassign [load [file join $outdir sqlite3 shell$n.tsv]] ref reforder
  lassign [load [file join $outdir sqlive shell$n.tsv]] got gotorder
  set names $reforder
  foreach name $gotorder {
    if {![dict exists $ref $name]} {lappend names $name}
  }
  set nref 0
  set nok 0
  foreach name $names {
    set r [expr {[dict exists $ref $name] ? [dict get $ref $name] : {missing {} {} {} {}}}]
    set g [expr {[dict exists $got $name] ? [dict get $got $name] : {missing {} {} {} {}}}]
    lassign $r rstatus rexp rgot rscript rcalls
    lassign $g gstatus gexp ggot gscript gcalls
    if {[string match *:abort $name]} {
      if {$rstatus ne "missing"} {lappend ref_failures "$name: [lindex $r 2]"}
      if {$gstatus ne "missing"} {puts stderr "  sqlive $file stopped early: $ggot"}
      continue
    }
    set e [expr {$gstatus eq "pass" || $gstatus eq "missing" ? "" : $gexp}]
    set x [expr {$gstatus eq "pass" || $gstatus eq "missing" ? "" : $ggot}]
    puts $tsv [join [list $file $name $rstatus $gstatus \
        [string map [list \\ \\\\ \t \\t \n \\n \r \\r] $e] \
        [string map [list \\ \\\\ \t \\t \n \\n \r \\r] $x]] \t]
    if {$rstatus ne "pass"} {
      lappend ref_failures "$name: sqlite3 $rstatus"
      continue
    }
    incr nref
    if {$gstatus eq "pass"} {incr nok; continue}
    lappend failing $name
    puts $md "## $name ($file)\n"
    if {$gstatus eq "missing"} {
      puts $md "Not run with sqlive: the test file stopped before this case\
          (see the log in sqlive/shell$n.log).\n"
      puts $md "Test script:\n[fence [string trim $rscript \n]]"
      continue
    }
    puts $md "Test script:\n[fence [string trim $rscript \n]]"
    puts $md "Expected:\n[fence $gexp]"
    if {$gstatus eq "error"} {
      puts $md "Got (a Tcl error in the test's script, with sqlive):\n[fence $ggot]"
    } else {
      puts $md "Got (sqlive):\n[fence $ggot]"
    }
    if {[llength $rcalls] || [llength $gcalls]} {
      puts $md "CLI calls:\n"
      set k 0
      foreach rc $rcalls gc $gcalls {
        incr k
        set c [expr {$rc ne "" ? $rc : $gc}]
        lassign $c args input
        puts $md "$k. arguments `[visible $args]`, input:\n[fence $input]"
        if {$rc eq ""} {
          puts $md "   sqlite3: no such call"
        } else {
          puts $md "   sqlite3: exit flag [lindex $rc 2]\n[fence [lindex $rc 3]]"
        }
        if {$gc eq ""} {
          puts $md "   sqlive: no such call\n"
        } elseif {[lrange $gc 2 3] eq [lrange $rc 2 3]} {
          puts $md "   sqlive: the same\n"
        } else {
          if {[lrange $gc 0 1] ne [lrange $rc 0 1]} {
            puts $md "   sqlive's call: arguments `[visible [lindex $gc 0]]`, input:\n[fence [lindex $gc 1]]"
          }
          puts $md "   sqlive: exit flag [lindex $gc 2]\n[fence [lindex $gc 3]]"
        }
      }
    }
  }
  incr total_ref $nref
  incr total_ok $nok
  set line "$file: sqlive passes $nok of $nref cases that sqlite3 passes"
  puts $line
  lappend summary $line
}
close $tsv
set overall "overall: sqlive passes $total_ok of $total_ref cases that sqlite3 passes"
puts $overall
close $md
if {[llength $ref_failures]} {
  puts "sqlite3 itself did not pass [llength $ref_failures] case(s), left out of the comparison:"
  foreach f $ref_failures {puts "  $f"}
}
puts "results: [file join $outdir results.tsv]; failures: [file join $outdir failures.md]"

proc sqlive_by_file {a b} {
  regexp {^shell(\d+)-} $a -> x
  regexp {^shell(\d+)-} $b -> y
  expr {$x - $y}
}
if {$opt(--update)} {
  # Entries of test files that did not run this time (--files) are kept.
  # (lsort is a stable merge sort: the order within a file is kept.)
  set kept {}
  foreach name $known {
    if {[regexp {^shell(\d+)-} $name -> n] && [lsearch -exact $opt(--files) $n] < 0} {
      lappend kept $name
    }
  }
  set entries [lsort -command sqlive_by_file [concat $failing $kept]]
  set fd [open $opt(--known) w]
  puts $fd "# Cases of SQLite 3.40.1's shell tests (test/shell1.test .. shell7.test) that"
  puts $fd "# sqlite3 passes and sqlive fails, one per line: scripts/shell-conformance.sh"
  puts $fd "# fails when a case not listed here fails. Rewrite with"
  puts $fd "# scripts/shell-conformance.sh --update once a case passes."
  foreach name $entries {puts $fd $name}
  close $fd
  puts "wrote [llength $entries] known failure(s) to $opt(--known)"
  exit 0
}

set regressions {}
foreach name $failing {
  if {[lsearch -exact $known $name] < 0} {lappend regressions $name}
}
# Listed cases of the files that ran (shellN-...) which no longer fail.
set fixed {}
foreach name $known {
  if {[regexp {^shell(\d+)-} $name -> n] && [lsearch -exact $opt(--files) $n] < 0} continue
  if {[lsearch -exact $failing $name] < 0} {lappend fixed $name}
}
if {[llength $fixed]} {
  puts "now passing (or gone), listed in [file tail $opt(--known)]: [llength $fixed];\
      trim the list (--update):"
  foreach name $fixed {puts "  $name"}
}
if {[llength $regressions]} {
  puts "REGRESSIONS: [llength $regressions] case(s) fail with sqlive and are not in\
      [file tail $opt(--known)]:"
  foreach name $regressions {puts "  $name"}
  exit 1
}
puts "no regressions: every failing case is a known failure"
exit 0

#!/usr/bin/env bash
# dqlite-cluster.sh - run a throwaway 3-node dqlite cluster on loopback.
#
# Uses Debian's `go-dqlite` package (apt-get install -y go-dqlite), which
# ships /usr/bin/dqlite-demo (the go-dqlite demo app, v1.11.5 on libdqlite
# 1.11.1) and /usr/bin/dqlite (the interactive/one-shot SQL shell).
#
# Each node is one `dqlite-demo` process:
#   dqlite-demo --api HOST:APIPORT --db HOST:DBPORT -D DIR [--join HOST:DBPORT,...]
# * --db   is the raft + client wire-protocol address (what a dqlite client
#          dials; the raft address string is also what LEADER returns).
# * --api  is a tiny HTTP API:  PUT /KEY (body = value) and GET /KEY, backed
#          by table `model(key TEXT, value TEXT, UNIQUE(key))` in database
#          "demo" (created by every node at start-up).
# * -D     base dir; the node's data lives in DIR/HOST:DBPORT/.
# * --join addresses of existing nodes; omitted for the bootstrap node.
# The HTTP listener only opens once the node is "ready" (joined the cluster,
# got a role, opened "demo" and created the table), so an answering API port
# means a ready node.
#
# Usage:
#   dqlite-cluster.sh start  DIR [--db-ports P1,P2,P3] [--api-ports A1,A2,A3]
#   dqlite-cluster.sh stop   DIR          # SIGTERM, then SIGKILL after a grace
#   dqlite-cluster.sh status DIR          # pids alive + cluster membership
#   dqlite-cluster.sh leader DIR          # prints the leader's db address
#   dqlite-cluster.sh kill-leader DIR     # SIGKILL leader, wait for a new one
#   dqlite-cluster.sh start-node DIR N    # (re)start node N (1..3) alone
#
# Environment (defaults in brackets):
#   DQLITE_HOST        [127.0.0.1]
#   DQLITE_DB_PORTS    [9001,9002,9003]   (overridden by --db-ports)
#   DQLITE_API_PORTS   [8001,8002,8003]   (overridden by --api-ports)
#   DQLITE_TIMEOUT     [60]  seconds to wait for the cluster to become ready
#   DQLITE_DEMO        [dqlite-demo]      DQLITE_SHELL [dqlite]
#
# Files written in DIR: cluster.env (ports, read back by the other commands),
# nodeN.pid, nodeN.log, and the per-node data directories.
#
# `start` prints one line per node:  node1 pid=123 db=127.0.0.1:9001 api=127.0.0.1:8001
# followed by `leader=127.0.0.1:9001`.  Exit status is non-zero (and the nodes
# it started are killed) if the cluster is not ready within DQLITE_TIMEOUT.

set -u

DEMO=${DQLITE_DEMO:-dqlite-demo}
SHELL_BIN=${DQLITE_SHELL:-dqlite}
TIMEOUT=${DQLITE_TIMEOUT:-60}

die() { echo "dqlite-cluster: $*" >&2; exit 2; }
log() { echo "dqlite-cluster: $*" >&2; }

need_bins() {
  command -v "$DEMO" >/dev/null 2>&1 ||
    die "$DEMO not found (apt-get install -y go-dqlite)"
  command -v "$SHELL_BIN" >/dev/null 2>&1 ||
    die "$SHELL_BIN not found (apt-get install -y go-dqlite)"
  command -v timeout >/dev/null 2>&1 || die "timeout(1) not found (coreutils)"
}

# ---------------------------------------------------------------- config

# load_config DIR: read DIR/cluster.env written by `start` (if any).
load_config() {
  local dir=$1
  HOST=${DQLITE_HOST:-127.0.0.1}
  DB_PORTS=${DQLITE_DB_PORTS:-9001,9002,9003}
  API_PORTS=${DQLITE_API_PORTS:-8001,8002,8003}
  if [ -f "$dir/cluster.env" ]; then
    # shellcheck disable=SC1091
    . "$dir/cluster.env"
  fi
  IFS=, read -r -a DBP <<<"$DB_PORTS"
  IFS=, read -r -a APIP <<<"$API_PORTS"
  [ "${#DBP[@]}" -eq 3 ] || die "need exactly 3 db ports, got '$DB_PORTS'"
  [ "${#APIP[@]}" -eq 3 ] || die "need exactly 3 api ports, got '$API_PORTS'"
}

db_addr()  { echo "$HOST:${DBP[$(($1 - 1))]}"; }
api_addr() { echo "$HOST:${APIP[$(($1 - 1))]}"; }
all_db_addrs() { echo "$(db_addr 1),$(db_addr 2),$(db_addr 3)"; }

# ---------------------------------------------------------------- helpers

# port_open HOST PORT: true if something accepts TCP connections there.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# http_get HOST:PORT PATH: print the body of a GET (curl if present, else a
# raw /dev/tcp request). Always bounded by a timeout.
http_get() {
  local hp=$1 path=$2
  if command -v curl >/dev/null 2>&1; then
    curl -s -m 3 "http://$hp/$path"
  else
    timeout 3 bash -c '
      exec 3<>/dev/tcp/${0%:*}/${0##*:} || exit 1
      printf "GET /%s HTTP/1.0\r\nHost: x\r\n\r\n" "$1" >&3
      sed "1,/^\r$/d" <&3' "$hp" "$path"
  fi
}

# pid_of DIR N: the pid of node N if it is alive and really a dqlite-demo.
pid_of() {
  local f="$1/node$2.pid" pid
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "dqlite-demo" || return 1
  echo "$pid"
}

# dq ADDRS CMD: run the dqlite shell with a hard timeout.
dq() {
  timeout 10 "$SHELL_BIN" -s "$1" demo "$2" 2>/dev/null
}

# leader_of ADDRS: print the leader's db address as seen via ADDRS.
leader_of() {
  local out
  out=$(dq "$1" ".leader") || return 1
  [ -n "$out" ] || return 1
  echo "$out"
}

# ---------------------------------------------------------------- commands

start_node() {   # start_node DIR N  (joins the other nodes unless N is bootstrap)
  local dir=$1 n=$2 join=() pid
  if pid=$(pid_of "$dir" "$n"); then
    log "node$n already running (pid $pid)"; return 0
  fi
  if port_open "$HOST" "${DBP[$((n - 1))]}" || port_open "$HOST" "${APIP[$((n - 1))]}"; then
    log "port ${DBP[$((n - 1))]} or ${APIP[$((n - 1))]} already in use"; return 1
  fi
  # Node 1 bootstraps a brand-new cluster (no --join). Nodes 2 and 3 are
  # given the other members' addresses. On a restart with existing data the
  # node's DIR/HOST:PORT/info.yaml and cluster.yaml win and --join is unused.
  if [ "$n" -ne 1 ]; then
    local others=() i
    for i in 1 2 3; do [ "$i" -ne "$n" ] && others+=("$(db_addr "$i")"); done
    join=(--join "$(IFS=,; echo "${others[*]}")")
  fi
  nohup "$DEMO" --api "$(api_addr "$n")" --db "$(db_addr "$n")" -D "$dir" \
    "${join[@]}" -v >>"$dir/node$n.log" 2>&1 </dev/null &
  echo $! >"$dir/node$n.pid"
}

# wait_api DIR N DEADLINE: wait until node N's HTTP API answers.
wait_api() {
  local dir=$1 n=$2 deadline=$3
  while [ "$(date +%s)" -lt "$deadline" ]; do
    # liveness only: right after the fork /proc/PID/cmdline may still show
    # the forking shell rather than dqlite-demo, so no pid_of here.
    kill -0 "$(cat "$dir/node$n.pid")" 2>/dev/null ||
      { log "node$n exited; see $dir/node$n.log"; return 1; }
    port_open "$HOST" "${APIP[$((n - 1))]}" && return 0
    sleep 0.2
  done
  log "node$n API $(api_addr "$n") not up in time"; return 1
}

# wait_voters DEADLINE: wait until .cluster lists 3 voters.
wait_voters() {
  local deadline=$1 out
  while [ "$(date +%s)" -lt "$deadline" ]; do
    out=$(dq "$(all_db_addrs)" ".cluster")
    [ "$(grep -c '|voter$' <<<"$out")" -eq 3 ] && return 0
    sleep 0.5
  done
  log "cluster did not reach 3 voters: $out"; return 1
}

cmd_start() {
  local dir=$1; shift
  while [ $# -gt 0 ]; do
    case $1 in
      --db-ports) DQLITE_DB_PORTS=$2; shift 2;;
      --api-ports) DQLITE_API_PORTS=$2; shift 2;;
      *) die "unknown option $1";;
    esac
  done
  need_bins
  mkdir -p "$dir" || die "cannot create $dir"
  dir=$(cd "$dir" && pwd)
  rm -f "$dir/cluster.env"
  load_config "$dir"
  cat >"$dir/cluster.env" <<EOF
HOST=$HOST
DB_PORTS=$DB_PORTS
API_PORTS=$API_PORTS
EOF
  local deadline=$(( $(date +%s) + TIMEOUT )) n
  # `start` always creates a brand-new cluster: refuse if any node of DIR is
  # running, then wipe the three node data dirs (a half-initialised dir from
  # an aborted start makes dqlite-demo fail with "inconsistent info.yaml and
  # cluster.yaml"). Use `start-node` to restart a node on its existing data.
  for n in 1 2 3; do
    pid_of "$dir" "$n" >/dev/null && die "node$n of $dir is running; stop it first"
  done
  for n in 1 2 3; do rm -rf "${dir:?}/$(db_addr "$n")" "$dir/node$n.log"; done
  # Start nodes one after the other: node 1 must be ready (it is the only
  # member) before the others can join through it.
  for n in 1 2 3; do
    start_node "$dir" "$n" && wait_api "$dir" "$n" "$deadline" ||
      { cmd_stop "$dir" >/dev/null; return 1; }
  done
  wait_voters "$deadline" || { cmd_stop "$dir" >/dev/null; return 1; }
  # Final end-to-end check through the HTTP API of every node.
  local key="ready$$"
  if command -v curl >/dev/null 2>&1; then
    curl -s -m 5 -X PUT --data-binary ok "http://$(api_addr 1)/$key" >/dev/null
    for n in 1 2 3; do
      [ "$(http_get "$(api_addr "$n")" "$key")" = "ok" ] ||
        { log "node$n did not read back the probe write"; cmd_stop "$dir" >/dev/null; return 1; }
    done
  fi
  for n in 1 2 3; do
    echo "node$n pid=$(pid_of "$dir" "$n") db=$(db_addr "$n") api=$(api_addr "$n")"
  done
  echo "leader=$(leader_of "$(all_db_addrs)")"
}

cmd_stop() {
  local dir=$1 n pid pids=() i
  load_config "$dir"
  for n in 1 2 3; do
    pid=$(pid_of "$dir" "$n") && pids+=("$pid")
  done
  [ ${#pids[@]} -eq 0 ] && { echo "stopped (nothing running)"; return 0; }
  # SIGTERM makes dqlite-demo try a graceful handover; that can stall when
  # quorum is gone, so escalate to SIGKILL after a short grace period.
  kill -TERM "${pids[@]}" 2>/dev/null
  for i in $(seq 1 30); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
  rm -f "$dir"/node?.pid
  echo "stopped pids: ${pids[*]}"
}

cmd_status() {
  local dir=$1 n pid
  load_config "$dir"
  for n in 1 2 3; do
    if pid=$(pid_of "$dir" "$n"); then
      echo "node$n pid=$pid db=$(db_addr "$n") api=$(api_addr "$n") up"
    else
      echo "node$n db=$(db_addr "$n") down"
    fi
  done
  dq "$(all_db_addrs)" ".cluster"
  echo "leader=$(leader_of "$(all_db_addrs)")"
}

cmd_leader() {
  load_config "$1"
  leader_of "$(all_db_addrs)" || { log "no leader"; return 1; }
}

cmd_kill_leader() {
  local dir=$1 old n pid victim="" new survivors=()
  load_config "$dir"
  old=$(leader_of "$(all_db_addrs)") || { log "no leader"; return 1; }
  for n in 1 2 3; do
    if [ "$(db_addr "$n")" = "$old" ]; then victim=$n
    else survivors+=("$(db_addr "$n")"); fi
  done
  [ -n "$victim" ] || { log "leader $old is not one of our nodes"; return 1; }
  pid=$(pid_of "$dir" "$victim") || { log "node$victim not running"; return 1; }
  kill -KILL "$pid"
  local t0 deadline
  t0=$(date +%s); deadline=$(( t0 + TIMEOUT ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    # ask only the survivors; they answer "" until an election completes
    if new=$(leader_of "$(IFS=,; echo "${survivors[*]}")") && [ "$new" != "$old" ]; then
      echo "killed node$victim pid=$pid old_leader=$old new_leader=$new after=$(( $(date +%s) - t0 ))s"
      return 0
    fi
    sleep 0.5
  done
  log "no new leader elected within ${TIMEOUT}s"; return 1
}

cmd_start_node() {
  local dir=$1 n=$2
  need_bins
  load_config "$dir"
  case $n in 1|2|3) ;; *) die "node must be 1, 2 or 3";; esac
  start_node "$dir" "$n" || return 1
  wait_api "$dir" "$n" $(( $(date +%s) + TIMEOUT )) || return 1
  echo "node$n pid=$(pid_of "$dir" "$n") db=$(db_addr "$n") api=$(api_addr "$n")"
}

usage() { sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

[ $# -ge 2 ] || usage
cmd=$1; dir=$2; shift 2
case $cmd in
  start) cmd_start "$dir" "$@";;
  stop) cmd_stop "$dir";;
  status) cmd_status "$dir";;
  leader) cmd_leader "$dir";;
  kill-leader) cmd_kill_leader "$dir";;
  start-node) [ $# -eq 1 ] || usage; cmd_start_node "$dir" "$1";;
  *) usage;;
esac

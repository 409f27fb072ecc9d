#!/usr/bin/env bash
# mpi_tests.sh: sf_dist_suite as a real mpirun job (mpi backend), checked
# against the shm backend, and the dead-rank test.
#
#   mpi_tests.sh MODE --suite PATH/sf_dist_suite --cli PATH/symmflow
#                [--topology PATH/sf_topology_check] [--mpirun PATH]
#
# Exit 0 pass, 1 fail, 77 skip (after one line "SKIP: <reason>").
#
# MODE
#   simulated   mpirun -np 4 with SYMMFLOW_RANKS_PER_NODE=2 (2 simulated nodes
#               of 2 ranks), then -np 2 with SYMMFLOW_RANKS_PER_NODE=1, each
#               running `sf_dist_suite --quick`. Every rank must print
#               "digest rank=R world=W <16 hex>", identical per rank to
#               `symmflow launch --nproc N -- sf_dist_suite --quick` (shm).
#               Also -np 3 with RANKS_PER_NODE=2 (nodes of 2 and 1 ranks), and
#               sf_topology_check (if given) at -np 4 with 2 nodes, -np 4 on
#               one node and -np 3 with nodes of 2 and 1; and `--mismatch`
#               (node 0 calls all_reduce_, node 1 all_gather): the job must
#               fail within 20 s with both calls named (by whichever leader
#               speaks first: the first abort ends the job), not hang.
#   netns       2 hosts as network namespaces (netns_hosts.sh, root only):
#               mpirun -H <ip1>:2,<ip2>:2 -np 4, TCP only, mpirun itself in the
#               first host. First `hostname` through the same mpirun command
#               must show the two host names twice each; then the suite's
#               digests must equal the shm run's, with ranks placed by slot
#               (0,1 | 2,3) and by node (0,2 | 1,3: runs of one rank, so the
#               relay crosses the network at every rank). sf_topology_check
#               sees 2 nodes, and SYMMFLOW_RANKS_PER_NODE=4 across the two
#               hosts is refused with a message naming the ranks.
#   kill        simulated nodes (RANKS_PER_NODE=2, -np 4), `sf_dist_suite --quick
#               --loop-seconds 60 --die-rank 3 --die-after 2`: rank 3 SIGKILLs
#               itself; the job must exit non-zero within 10 s of rank 3's death
#               (measured from when its process disappears), the output must
#               name rank 3, no process of the job may survive, and no new
#               /dev/shm/sf-* entry may remain (entries created during the test
#               and not held by any live process).
#   kill-netns  the same across 2 network namespaces (rank 3 on the second host).
#
# SF_MPI_TESTS_KILL_RPN overrides the kill mode's RANKS_PER_NODE (default 2;
# empty: no simulated nodes, all 4 ranks on one node).
# Every mpirun runs under `timeout 120`; outputs are kept in $SF_MPI_TESTS_KEEP
# (a directory) when that is set, else in a temporary directory removed at the
# end (printed on failure). Extra mpirun arguments: $SF_MPIRUN_ARGS (words).
#
# Examples (as root, in a build directory such as build/dev; or `ctest -L multinode`):
#   ../../tests/multinode/mpi_tests.sh simulated \
#       --suite tests/multinode/sf_dist_suite --cli ./symmflow
#   SF_MPI_TESTS_KEEP=/tmp/out ../../tests/multinode/mpi_tests.sh kill-netns \
#       --suite tests/multinode/sf_dist_suite --cli ./symmflow
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NETNS="$HERE/netns_hosts.sh"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; FAILED=1; }
info() { echo "-- $*"; }
FAILED=0

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

MODE=${1:-}
[ -n "$MODE" ] || usage
shift
SUITE="" CLI="" MPIRUN="" TOPO=""
while [ $# -gt 0 ]; do
  case "$1" in
    --suite) SUITE=$2; shift 2 ;;
    --cli) CLI=$2; shift 2 ;;
    --mpirun) MPIRUN=$2; shift 2 ;;
    --topology) TOPO=$(realpath "$2"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "mpi_tests: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$MPIRUN" ] || MPIRUN=$(command -v mpirun 2>/dev/null) || MPIRUN=""
[ -n "$MPIRUN" ] && [ -x "$MPIRUN" ] || skip "mpirun not found"
[ -n "$SUITE" ] && [ -x "$SUITE" ] || { echo "FAIL: --suite '$SUITE' is not an executable"; exit 1; }
[ -n "$CLI" ] && [ -x "$CLI" ] || { echo "FAIL: --cli '$CLI' is not an executable"; exit 1; }
SUITE=$(realpath "$SUITE"); CLI=$(realpath "$CLI")
case "$MPIRUN" in /*) ;; *) MPIRUN="$PWD/$MPIRUN" ;; esac

if [ -n "${SF_MPI_TESTS_KEEP:-}" ]; then
  OUT="$SF_MPI_TESTS_KEEP"; mkdir -p "$OUT"
else
  OUT=$(mktemp -d "/tmp/sf-mpi-tests.$$.XXXXXX")
  # The inner netns run shares the outer's directory and must not remove it.
  [ -z "${SF_MPI_TESTS_INNER:-}" ] && trap 'rm -rf "$OUT"' EXIT
fi

# A broken backend must never hang ctest.
TIMEOUT=(timeout -k 10 120)
MPI_COMMON=("$MPIRUN" --allow-run-as-root --oversubscribe ${SF_MPIRUN_ARGS:-})
TCP_ONLY=(--mca btl tcp,self,vader --mca btl_tcp_if_include 10.77.0.0/16
          --mca oob_tcp_if_include 10.77.0.0/16)
unset SYMMFLOW_RANKS_PER_NODE   # only ever set per mpirun, with -x

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# "digest rank=R world=W HEX" lines of an output file, one per rank, sorted.
digests() {
  grep -o 'digest rank=[0-9]* world=[0-9]* [0-9a-f]\{16\}' "$1" | sort -u | sort -t= -k2,2n
}

# check_digests NAME FILE NP: every rank 0..NP-1 printed exactly one digest.
check_digests() {
  local name=$1 file=$2 np=$3 d r
  d=$(digests "$file")
  for ((r = 0; r < np; r++)); do
    local c
    c=$(grep -c "^digest rank=$r world=$np " <<< "$d")
    [ "$c" = 1 ] || { fail "$name: rank $r printed $c distinct digests (world=$np) (output: $file)"; return 1; }
  done
  local total
  total=$(grep -c . <<< "$d")
  [ "$total" = "$np" ] || { fail "$name: $total digest lines for $np ranks (output: $file)"; return 1; }
  return 0
}

# check_suite NAME FILE BACKEND: the suite's own verdict, where it gives one
# (rank 0: "PASS <n> checks", "battery ... s, backend <name>"; "MISMATCH" on error).
check_suite() {
  local name=$1 file=$2 want=$3 got
  if grep -q MISMATCH "$file"; then
    fail "$name: the suite reports a MISMATCH"; grep -m5 MISMATCH "$file"; return 1
  fi
  grep -qE 'PASS [0-9]+ checks' "$file" || { fail "$name: no 'PASS <n> checks' line"; return 1; }
  got=$(sed -n 's/.*battery .*, backend \([a-z0-9_]*\).*/\1/p' "$file" | head -n 1)
  if [ -n "$got" ] && [ "$got" != "$want" ]; then
    fail "$name: ran on the '$got' backend, expected '$want'"; return 1
  fi
  info "$name: $(grep -oE 'PASS [0-9]+ checks' "$file" | head -n 1), backend ${got:-?}"
}

# shm_reference NP FILE: the shm backend's digests.
shm_reference() {
  local np=$1 file=$2 rc
  info "shm: symmflow launch --nproc $np -- sf_dist_suite --quick"
  "${TIMEOUT[@]}" "$CLI" launch --nproc "$np" -- "$SUITE" --quick > "$file" 2>&1
  rc=$?
  [ $rc = 0 ] || { fail "shm reference (nproc $np) exited $rc"; tail -n 30 "$file"; return 1; }
  check_suite "shm nproc $np" "$file" shm && check_digests "shm nproc $np" "$file" "$np"
}

# compare_digests NAME REF OUT
compare_digests() {
  if diff <(digests "$2") <(digests "$3") > "$OUT/diff.$$" 2>&1; then
    info "$1: digests identical to shm ($(digests "$3" | wc -l) ranks)"
  else
    fail "$1: digests differ from shm (< shm, > mpi):"; cat "$OUT/diff.$$"
  fi
}

# run_mpi NAME FILE ARGS...: one mpirun, checked for exit 0 and complete digests.
run_mpi() {
  local name=$1 file=$2 rc t0 t1; shift 2
  info "$name: $*"
  t0=$(now)
  "${TIMEOUT[@]}" "$@" > "$file" 2>&1
  rc=$?
  t1=$(now)
  info "$name: exit $rc after $(elapsed "$t0" "$t1") s"
  if [ $rc != 0 ]; then
    [ $rc = 124 ] && fail "$name: mpirun timed out (120 s)" || fail "$name: mpirun exited $rc"
    tail -n 40 "$file"; return 1
  fi
  return 0
}

# topology NAME EXPECT_NODES RPN MPIRUN-ARGS...: sf_topology_check on every rank.
topology() {
  local name=$1 nodes=$2 rpn=$3; shift 3
  [ -n "$TOPO" ] || return 0
  if run_mpi "$name" "$OUT/$name.out" "$@" "$TOPO" --nodes "$nodes" --rpn "$rpn"; then
    local ok
    ok=$(grep -c '^topology ok' "$OUT/$name.out")
    if [ "$ok" -ge 1 ] && ! grep -q 'topology check failed' "$OUT/$name.out"; then
      info "$name: $ok ranks: topology ok ($nodes nodes of $rpn)"
    else
      fail "$name: topology check"; cat "$OUT/$name.out"
    fi
  fi
}

# --- process helpers for the kill test ----------------------------------------
alive() {   # pid exists and is not a zombie
  local st
  st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}
descendants() {   # every descendant pid of $1
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { parent[$1] = $2; pids[NR] = $1 }
    END {
      for (i = 1; i <= NR; i++) {
        p = pids[i]; q = parent[p]; n = 0
        while (q != "" && q != 0 && n < 64) { if (q == root) { print p; break } q = parent[q]; n++ }
      }
    }'
}
rank_of() {   # OMPI_COMM_WORLD_RANK of pid, if it is the suite
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  [ "$exe" = "$SUITE" ] || return 1
  tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'
}
shm_sf() { ls -1 /dev/shm 2>/dev/null | grep '^sf-' | sort; }
held() {   # is /dev/shm/$1 open or mapped by a live process?
  local f="/dev/shm/$1" p
  for p in /proc/[0-9]*; do
    grep -qF "$f" "$p/maps" 2>/dev/null && return 0
    ls -l "$p/fd" 2>/dev/null | grep -qF -- "-> $f" && return 0
  done
  return 1
}

# kill_test NAME DIE_RANK MPIRUN-COMMAND...
kill_test() {
  local name=$1 die=$2; shift 2
  local file="$OUT/$name.out" die_after=2 limit=10
  local before pid t0 t_dead="" t_exit rc p r seen=" " dead_pid=""
  before=$(shm_sf)
  info "$name: $*"
  t0=$(now)
  "${TIMEOUT[@]}" "$@" > "$file" 2>&1 &
  pid=$!
  while alive "$pid"; do
    for p in $(descendants "$pid"); do
      case "$seen" in *" $p "*) ;; *) seen="$seen$p " ;; esac
      if [ -z "$dead_pid" ] && r=$(rank_of "$p") && [ "$r" = "$die" ]; then
        dead_pid=$p
        info "$name: rank $die is pid $p"
      fi
    done
    if [ -n "$dead_pid" ] && [ -z "$t_dead" ] && ! alive "$dead_pid"; then
      t_dead=$(now)
      info "$name: rank $die (pid $dead_pid) gone $(elapsed "$t0" "$t_dead") s after start"
    fi
    sleep 0.05
  done
  wait "$pid"; rc=$?
  t_exit=$(now)
  [ -n "$dead_pid" ] && [ -z "$t_dead" ] && t_dead=$t_exit
  info "$name: mpirun exit $rc after $(elapsed "$t0" "$t_exit") s"
  sed 's/^/   | /' "$file" | grep -v '^   | digest ' | tail -n 40

  # 0. rank $die really got to the kill (else the job failed for another reason)
  grep -q "rank $die: --die-rank: killing myself" "$file" ||
    fail "$name: rank $die never announced its SIGKILL ('rank $die: --die-rank: killing myself'): the job failed before the loop"

  # 1. non-zero, no timeout, within the limit after the death
  [ $rc = 0 ] && fail "$name: the job exited 0 although rank $die was killed"
  # (137 is no sign of a hang: mpirun passes on the killed rank's 128+9)
  [ $rc = 124 ] && fail "$name: the job hung until the 120 s timeout"
  local dt
  if [ -n "$t_dead" ]; then
    dt=$(elapsed "$t_dead" "$t_exit")
    info "$name: exit came $dt s after rank $die died (limit $limit s)"
  else
    # Never saw rank $die's process: bound from the start (conservative).
    dt=$(elapsed "$t0" "$t_exit")
    dt=$(awk -v d="$dt" -v a="$die_after" 'BEGIN { printf "%.2f", d - a }')
    info "$name: rank $die's process not observed; exit $dt s after start + $die_after s (upper bound)"
  fi
  awk -v d="$dt" -v l="$limit" 'BEGIN { exit !(d <= l) }' ||
    fail "$name: exit came $dt s after rank $die died, more than $limit s"

  # 2. the output names the dead rank
  # (a line with "rank 3" / "rank=3" and a word of failure; mpirun's own
  # "process rank 3 ... exited on signal 9" counts, symmflow's is reported apart)
  local named ours
  # (not the dying rank's own "rank 3: --die-rank: killing myself")
  named=$(grep -v '^digest ' "$file" | grep -v -e '--die-rank' -e 'killing myself' |
          grep -Ei "rank[ =:#]*$die([^0-9]|\$)" |
          grep -Ei 'dead|died|die |fail|abort|kill|lost|peer|signal|exit|gone|timeout')
  if [ -n "$named" ]; then
    info "$name: output names rank $die:"; sed 's/^/   > /' <<< "$named" | head -n 8
    ours=$(grep -v '^mpirun noticed' <<< "$named")
    [ -n "$ours" ] && info "$name: symmflow/suite lines name rank $die too" ||
      info "$name: note: only mpirun's own message names rank $die"
  else
    fail "$name: no output line names rank $die as failed"
  fi

  # 3. no process of the job survives (give the slowest a moment)
  local left="" i
  for i in $(seq 1 40); do
    left=""
    for p in $seen; do alive "$p" && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    fail "$name: processes of the job still alive 4 s after mpirun exited:$left"
    ps -o pid,ppid,stat,etime,args -p "${left# }" 2>/dev/null | sed 's/^/   /'
    for p in $left; do kill -KILL "$p" 2>/dev/null; done   # ours: started by this test
  fi

  # 4. no new sf-* entry in /dev/shm (not held by some other live process)
  local new leaked=""
  for _ in $(seq 1 30); do
    new=$(comm -13 <(echo "$before") <(shm_sf))
    [ -z "$new" ] && break
    sleep 0.1
  done
  for p in $new; do
    if held "$p"; then info "$name: /dev/shm/$p is new but held by a live process (another job?), ignored"
    else leaked="$leaked $p"; fi
  done
  if [ -n "$leaked" ]; then
    fail "$name: left in /dev/shm:$leaked"
  else
    info "$name: no new /dev/shm/sf-* entries"
  fi
}

# --- modes ----------------------------------------------------------------------
KILL_ARGS=(--quick --loop-seconds 60 --die-rank 3 --die-after 2)

# inside netns_hosts.sh run 2 (SF_NETNS_* set)
netns_inner() {
  local what=$1 h1 h2
  read -r h1 h2 <<< "$SF_NETNS_IPS"
  local MPI_NET=("$SF_NETNS_EXEC" "$h1" "${MPI_COMMON[@]}" -H "$h1:2,$h2:2" -np 4
                 --mca plm_rsh_agent "$SF_NETNS_AGENT" "${TCP_ONLY[@]}")
  # the ranks really are on two hosts
  if run_mpi "netns hostname" "$OUT/netns-hostname.out" "${MPI_NET[@]}" hostname; then
    local seen want
    seen=$(grep -xF -f <(tr ' ' '\n' <<< "$SF_NETNS_NAMES") "$OUT/netns-hostname.out" |
           sort | uniq -c | awk '{ print $2 "x" $1 }' | sort | tr '\n' ' ')
    want=$(for n in $SF_NETNS_NAMES; do echo "${n}x2"; done | sort | tr '\n' ' ')
    if [ "$seen" = "$want" ]; then info "netns: ranks on 2 hosts: $seen"
    else fail "netns: hostnames through mpirun are '$seen', want '$want'"; cat "$OUT/netns-hostname.out"; fi
  fi
  [ $FAILED = 0 ] || return
  case "$what" in
    netns)
      if run_mpi "netns suite" "$OUT/netns-suite.out" "${MPI_NET[@]}" "$SUITE" --quick; then
        check_suite "netns suite" "$OUT/netns-suite.out" mpi &&
        check_digests "netns suite" "$OUT/netns-suite.out" 4 &&
          compare_digests "netns -np 4 (2 hosts x 2)" "$OUT/shm4.out" "$OUT/netns-suite.out"
      fi ;;
    kill-netns)
      kill_test kill-netns 3 "${MPI_NET[@]}" "$SUITE" "${KILL_ARGS[@]}" ;;
  esac
  [ "$what" = netns ] || return
  if run_mpi "netns suite by node" "$OUT/netns-bynode.out" "${MPI_NET[@]}" --map-by node \
       "$SUITE" --quick; then
    check_suite "netns suite by node" "$OUT/netns-bynode.out" mpi &&
    check_digests "netns suite by node" "$OUT/netns-bynode.out" 4 &&
      compare_digests "netns -np 4 --map-by node (0,2 | 1,3)" "$OUT/shm4.out" "$OUT/netns-bynode.out"
  fi
  topology netns-topology 2 2 "${MPI_NET[@]}"
  if [ -n "$TOPO" ]; then
    # Simulated nodes must not cross real hosts.
    "${TIMEOUT[@]}" "${MPI_NET[@]}" -x SYMMFLOW_RANKS_PER_NODE=4 "$TOPO" --nodes 1 --rpn 4 \
      > "$OUT/netns-rpn4.out" 2>&1
    if grep -q "SYMMFLOW_RANKS_PER_NODE=4 puts ranks 0 and 2 on one node, but they run on different hosts" \
         "$OUT/netns-rpn4.out"; then
      info "netns: RANKS_PER_NODE=4 across 2 hosts refused"
    else
      fail "netns: RANKS_PER_NODE=4 across 2 hosts was not refused as expected"; tail -n 20 "$OUT/netns-rpn4.out"
    fi
  fi
}

case "$MODE" in
  simulated)
    shm_reference 4 "$OUT/shm4.out" || exit 1
    if run_mpi "mpi 2x2" "$OUT/mpi4.out" "${MPI_COMMON[@]}" -np 4 -x SYMMFLOW_RANKS_PER_NODE=2 \
         "$SUITE" --quick; then
      check_suite "mpi 2x2" "$OUT/mpi4.out" mpi && check_digests "mpi 2x2" "$OUT/mpi4.out" 4 &&
        compare_digests "mpi -np 4, 2 nodes x 2" "$OUT/shm4.out" "$OUT/mpi4.out"
    fi
    shm_reference 2 "$OUT/shm2.out" || exit 1
    if run_mpi "mpi 2x1" "$OUT/mpi2.out" "${MPI_COMMON[@]}" -np 2 -x SYMMFLOW_RANKS_PER_NODE=1 \
         "$SUITE" --quick; then
      check_suite "mpi 2x1" "$OUT/mpi2.out" mpi && check_digests "mpi 2x1" "$OUT/mpi2.out" 2 &&
        compare_digests "mpi -np 2, 2 nodes x 1" "$OUT/shm2.out" "$OUT/mpi2.out"
    fi
    shm_reference 3 "$OUT/shm3.out" || exit 1
    if run_mpi "mpi 2+1" "$OUT/mpi3.out" "${MPI_COMMON[@]}" -np 3 -x SYMMFLOW_RANKS_PER_NODE=2 \
         "$SUITE" --quick; then
      check_suite "mpi 2+1" "$OUT/mpi3.out" mpi && check_digests "mpi 2+1" "$OUT/mpi3.out" 3 &&
        compare_digests "mpi -np 3, nodes of 2 and 1" "$OUT/shm3.out" "$OUT/mpi3.out"
    fi
    topology topology-2x2 2 2 "${MPI_COMMON[@]}" -np 4 -x SYMMFLOW_RANKS_PER_NODE=2
    topology topology-1x4 1 4 "${MPI_COMMON[@]}" -np 4
    topology topology-2+1 2 2 "${MPI_COMMON[@]}" -np 3 -x SYMMFLOW_RANKS_PER_NODE=2
    if [ -n "$TOPO" ]; then
      info "mismatch: node 0 calls all_reduce_, node 1 all_gather"
      t0=$(now)
      "${TIMEOUT[@]}" "${MPI_COMMON[@]}" -np 4 -x SYMMFLOW_RANKS_PER_NODE=2 -x SYMMFLOW_TIMEOUT=60 \
        "$TOPO" --nodes 2 --rpn 2 --mismatch > "$OUT/mismatch.out" 2>&1
      rc=$?
      t1=$(now)
      if [ $rc != 0 ] && [ $rc != 124 ] &&
         awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 20) }' &&
         grep "ranks disagree at collective call #1 of group 'world' (between nodes)" "$OUT/mismatch.out" |
           grep "all_reduce(f32, 64 elements, sum)" | grep -q "all_gather(f32, 16 elements)"; then
        info "mismatch: failed after $(elapsed "$t0" "$t1") s naming both calls"
      else
        fail "mismatch: exit $rc after $(elapsed "$t0" "$t1") s without the expected message"
        tail -n 20 "$OUT/mismatch.out"
      fi
    fi ;;
  kill)
    rpn=${SF_MPI_TESTS_KILL_RPN-2}
    kill_test kill 3 "${MPI_COMMON[@]}" -np 4 ${rpn:+-x SYMMFLOW_RANKS_PER_NODE=$rpn} \
      "$SUITE" "${KILL_ARGS[@]}" ;;
  netns|kill-netns)
    if [ -n "${SF_MPI_TESTS_INNER:-}" ]; then
      netns_inner "$MODE"
    else
      "$NETNS" check || exit $?
      if [ "$MODE" = netns ]; then shm_reference 4 "$OUT/shm4.out" || exit 1; fi
      SF_MPI_TESTS_INNER=1 SF_MPI_TESTS_KEEP="$OUT" "$NETNS" run 2 -- \
        bash "$0" "$MODE" --suite "$SUITE" --cli "$CLI" --mpirun "$MPIRUN" ${TOPO:+--topology "$TOPO"}
      rc=$?
      [ $rc = 77 ] && exit 77
      [ $rc = 0 ] || FAILED=1
    fi ;;
  *)
    echo "mpi_tests: unknown mode '$MODE'" >&2; usage ;;
esac

if [ $FAILED = 0 ]; then
  [ -n "${SF_MPI_TESTS_INNER:-}" ] || echo "PASS: $MODE"
  exit 0
fi
if [ -z "${SF_MPI_TESTS_INNER:-}" ]; then
  echo "FAIL: $MODE (outputs in $OUT)"
  [ -z "${SF_MPI_TESTS_KEEP:-}" ] && { trap - EXIT; echo "   (kept: $OUT)"; }
fi
exit 1

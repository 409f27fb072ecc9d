#!/usr/bin/env bash
# netns_hosts.sh: N fake "hosts" on this machine, one Linux network namespace
# each, joined by a private Ethernet, for running real multi-host mpirun jobs.
#
#   netns_hosts.sh check
#       Exit 0 when hosts can be made here (root, `ip`, `unshare`, namespaces
#       permitted); else print one line "SKIP: <reason>" and exit 77.
#
#   netns_hosts.sh run N [--] COMMAND [ARG...]
#       Set up N hosts (N >= 2), run COMMAND (in the root namespace) with the
#       variables below, tear every host down (also on failure, INT, TERM) and
#       exit with COMMAND's status. Exit 77 with "SKIP: <reason>" when hosts
#       cannot be made. Nothing outlives the call: processes still running in
#       the hosts are killed (by pid) and the namespaces deleted.
#
#   Variables seen by COMMAND:
#     SF_NETNS_N        number of hosts
#     SF_NETNS_NAMES    host names, space separated; each is both the network
#                       namespace name and the UTS hostname its programs see
#     SF_NETNS_IPS      their addresses, same order: 10.77.<x>.1 ... 10.77.<x>.N
#     SF_NETNS_SUBNET   10.77.<x>.0/24 (everything is inside 10.77.0.0/16)
#     SF_NETNS_AGENT    remote-launch agent for `mpirun --mca plm_rsh_agent`:
#                         AGENT [-opts...] <host> <command words...>
#                       <host> is an address, a name from above or a 1-based
#                       index into SF_NETNS_NAMES; the words are
#                       joined with spaces and run by `sh -c` inside that host
#                       (ssh semantics, as OpenMPI's rsh launcher expects).
#     SF_NETNS_EXEC     run a program (argv, no shell) inside a host:
#                         EXEC <host> PROGRAM [ARG...]
#     SF_NETNS_DIR      scratch directory of this invocation (removed at the end)
#
#   Example:
#     netns_hosts.sh run 2 -- bash -c '
#       set -- $SF_NETNS_IPS
#       "$SF_NETNS_EXEC" "$1" mpirun --allow-run-as-root -H "$1:2,$2:2" -np 4 \
#           --mca plm_rsh_agent "$SF_NETNS_AGENT" --mca btl tcp,self,vader \
#           --mca btl_tcp_if_include 10.77.0.0/16 --mca oob_tcp_if_include 10.77.0.0/16 \
#           hostname'
#
# Topology: for 2 hosts one veth pair (eth0 in each host); for N > 2 a bridge
# in its own namespace, every host's eth0 plugged into it. All interfaces are
# created inside the namespaces (never in the root namespace), so the host
# network is untouched. Names carry the caller's pid ("sf<pid>h<i>"), so
# concurrent invocations never collide.
set -u

skip() { echo "SKIP: $*"; exit 77; }

preflight() {
  [ "$(id -u)" = 0 ] || skip "not root (network namespaces need CAP_SYS_ADMIN/CAP_NET_ADMIN)"
  command -v ip >/dev/null 2>&1 || skip "'ip' (iproute2) not installed"
  command -v unshare >/dev/null 2>&1 || skip "'unshare' (util-linux) not installed"
  local probe="sf$$probe"
  ip netns add "$probe" >/dev/null 2>&1 || skip "network namespaces not permitted here ('ip netns add' failed)"
  local ok=1
  ip netns exec "$probe" unshare --uts true >/dev/null 2>&1 || ok=0
  ip -n "$probe" link add eth0 type veth peer name eth1 >/dev/null 2>&1 || ok=2
  ip netns del "$probe" >/dev/null 2>&1
  [ $ok = 1 ] || { [ $ok = 0 ] && skip "'unshare --uts' not permitted inside a network namespace"; skip "veth interfaces not available"; }
}

# --- teardown ----------------------------------------------------------------
NAMESPACES=()
DIR=""
CHILD=""
torn_down=0
teardown() {
  [ $torn_down = 1 ] && return
  torn_down=1
  local ns pids p
  if [ -n "$CHILD" ] && kill -0 "$CHILD" 2>/dev/null; then
    kill -TERM "$CHILD" 2>/dev/null
  fi
  # Whatever still runs in a host (orted, ranks, ...) was started by us: end it
  # by pid, TERM first, then KILL.
  for sig in TERM KILL; do
    pids=""
    for ns in "${NAMESPACES[@]}"; do
      pids="$pids $(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
    done
    pids=$(echo $pids)
    [ -z "$pids" ] && break
    for p in $pids; do kill -"$sig" "$p" 2>/dev/null; done
    [ $sig = TERM ] && for _ in 1 2 3 4 5 6 7 8 9 10; do
      sleep 0.2
      local left=0
      for p in $pids; do kill -0 "$p" 2>/dev/null && left=1; done
      [ $left = 0 ] && break
    done
  done
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
  [ -n "$DIR" ] && rm -rf "$DIR"
}
on_signal() { teardown; trap - "$1"; kill -"$1" $$; exit 130; }

# --- setup -------------------------------------------------------------------
setup() {
  local n=$1 tag="sf$$" i
  local x=$(( ($$ % 250) + 1 ))
  DIR=$(mktemp -d "/tmp/sf-netns.$$.XXXXXX") || { echo "netns_hosts: mktemp failed" >&2; return 1; }
  local names="" ips=""
  for ((i = 1; i <= n; i++)); do
    local ns="${tag}h$i"
    ip netns add "$ns" || return 1
    NAMESPACES+=("$ns")
    names="$names $ns"; ips="$ips 10.77.$x.$i"
    ip -n "$ns" link set lo up || return 1
  done
  if [ "$n" = 2 ]; then
    ip -n "${tag}h1" link add eth0 type veth peer name eth0 netns "${tag}h2" || return 1
  else
    local br="${tag}br"
    ip netns add "$br" || return 1
    NAMESPACES+=("$br")
    ip -n "$br" link set lo up
    ip -n "$br" link add br0 type bridge || return 1
    ip -n "$br" link set br0 up || return 1
    for ((i = 1; i <= n; i++)); do
      ip -n "${tag}h$i" link add eth0 type veth peer name "p$i" netns "$br" || return 1
      ip -n "$br" link set "p$i" master br0 || return 1
      ip -n "$br" link set "p$i" up || return 1
    done
  fi
  for ((i = 1; i <= n; i++)); do
    ip -n "${tag}h$i" addr add "10.77.$x.$i/24" dev eth0 || return 1
    ip -n "${tag}h$i" link set eth0 up || return 1
  done
  names=${names# }; ips=${ips# }

  # host map: "<address> <name>" per line
  : > "$DIR/hosts"
  local a=($ips) b=($names)
  for ((i = 0; i < n; i++)); do echo "${a[$i]} ${b[$i]}" >> "$DIR/hosts"; done

  # The lookup shared by both helpers: address or name -> namespace name.
  local lookup='
lookup() {
  local i=0
  while read -r addr name; do
    i=$((i + 1))
    if [ "$1" = "$addr" ] || [ "$1" = "$name" ] || [ "$1" = "$i" ]; then echo "$name"; return 0; fi
  done < "'"$DIR"'/hosts"
  return 1
}'

  cat > "$DIR/agent" <<EOF
#!/usr/bin/env bash
# mpirun rsh agent: AGENT [-opts...] <host> <command words...> (ssh semantics)
$lookup
while [ \$# -gt 0 ]; do
  case "\$1" in
    -l|-p|-o|-i|-F) shift 2 ;;   # ssh options with a value
    -*) shift ;;
    *) break ;;
  esac
done
[ \$# -ge 1 ] || { echo "netns agent: no host" >&2; exit 255; }
host=\$1; shift
ns=\$(lookup "\$host") || { echo "netns agent: unknown host '\$host'" >&2; exit 255; }
cmd="\$*"
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$1" && exec sh -c "\$2"' sh "\$ns" "\$cmd"
EOF
  cat > "$DIR/exec" <<EOF
#!/usr/bin/env bash
# EXEC <host> PROGRAM [ARG...]: run PROGRAM inside <host> (address or name)
$lookup
[ \$# -ge 2 ] || { echo "usage: \$0 <host> PROGRAM [ARG...]" >&2; exit 2; }
ns=\$(lookup "\$1") || { echo "netns exec: unknown host '\$1'" >&2; exit 255; }
shift
exec ip netns exec "\$ns" unshare --uts sh -c 'hostname "\$0" && exec "\$@"' "\$ns" "\$@"
EOF
  chmod +x "$DIR/agent" "$DIR/exec"

  # Connectivity check: every host reaches the first.
  local first=${a[0]}
  for ((i = 1; i < n; i++)); do
    local ok=0
    command -v ping >/dev/null 2>&1 || break   # no ping: trust the setup
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      ip netns exec "${b[$i]}" ping -c1 -W1 "$first" >/dev/null 2>&1 && { ok=1; break; }
      sleep 0.3
    done
    [ $ok = 1 ] || { echo "netns_hosts: ${b[$i]} cannot reach $first" >&2; return 1; }
  done

  export SF_NETNS_N=$n SF_NETNS_NAMES="$names" SF_NETNS_IPS="$ips" \
         SF_NETNS_SUBNET="10.77.$x.0/24" SF_NETNS_AGENT="$DIR/agent" \
         SF_NETNS_EXEC="$DIR/exec" SF_NETNS_DIR="$DIR"
}

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }

case "${1:-}" in
  check)
    preflight
    exit 0 ;;
  run)
    shift
    n=${1:-}
    [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || { echo "netns_hosts: run needs N >= 2" >&2; exit 2; }
    shift
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || { echo "netns_hosts: run needs a COMMAND" >&2; exit 2; }
    preflight
    trap teardown EXIT
    trap 'on_signal INT' INT
    trap 'on_signal TERM' TERM
    trap 'on_signal HUP' HUP
    setup "$n" || { echo "netns_hosts: setup failed" >&2; exit 1; }
    # Run in the background and wait, so that INT/TERM reach our trap at once.
    "$@" <&0 &
    CHILD=$!
    wait "$CHILD"
    rc=$?
    # wait returns >128 when interrupted by a trapped signal; the trap exits.
    exit $rc ;;
  -h|--help|help|"")
    usage ;;
  *)
    echo "netns_hosts: unknown subcommand '$1'" >&2; usage ;;
esac

#!/usr/bin/env bash
# A real Slurm cluster on this machine for the fleet tests: Debian's slurmctld, slurmd and munged,
# each slurmd its own host: a network namespace with a veth on a local bridge, a UTS namespace
# (`hostname` inside a job names the node) and a mount namespace (its own spool folder). Nothing
# leaves the machine: every address is on the bridge this script creates.
#   local_cluster.sh up [NODES]     start munged, slurmctld and NODES slurmds (default 6)
#   local_cluster.sh down           stop everything `up` started and remove the namespaces
#   local_cluster.sh env            the variables a client needs (SLURM_CONF), for eval
#   local_cluster.sh health NODE COMMAND...
#                                   what NODE's Slurm HealthCheckProgram runs from now on (every
#                                   $GPUCAL_CLUSTER_HEALTH_INTERVAL s, default 60; before, it passes)
#   local_cluster.sh fault link NODE RATE | rail NODE RAIL RATE | loss NODE PERCENT | cpu NODE PERCENT
#                         | stop NODE | slurmd NODE | clear
#                                   plant a fault: rate-limit NODE's veth (tc tbf), or only the
#                                   traffic of its RAIL-th rank of a job step (the ports below), drop
#                                   PERCENT of its packets each way (nftables), cap its CPU (cgroup v1
#                                   cpu.cfs_quota_us), SIGSTOP everything in it, kill its slurmd
# Rails: each task of a step gets MPI TCP ports by its index on the node (Slurm's TaskProlog sets
# Open MPI's btl_tcp_port_min_v4 to 20480 + 128 x SLURM_LOCALID, 128 ports), standing in for the
# NIC of each GPU, so one rank's path can be shaped alone.
# Exit 77 (skipped) where the kernel refuses namespaces or the Slurm daemons are missing.
# State lives in $GPUCAL_CLUSTER_DIR (default /tmp/gpucal-cluster).
set -euo pipefail

DIR=${GPUCAL_CLUSTER_DIR:-/tmp/gpucal-cluster}
PREFIX=${GPUCAL_CLUSTER_PREFIX:-gc}          # names of bridge, namespaces, veths, cgroups
SUBNET=${GPUCAL_CLUSTER_SUBNET:-10.213.7}    # /24 on the bridge; .1 is the controller
CTL_PORT=${GPUCAL_CLUSTER_CTL_PORT:-16817}
SLURMD_PORT=16818
BRIDGE=${PREFIX}br0
CGROUP_CPU=/sys/fs/cgroup/cpu

skip() { echo "local_cluster: skipped: $*" >&2; exit 77; }
die() { echo "local_cluster: error: $*" >&2; exit 1; }
node_name() { echo "${PREFIX}node$1"; }
netns_of() { echo "${PREFIX}ns$1"; }
node_count() { echo "${NODE_COUNT_OVERRIDE:-$(cat "$DIR/nodes" 2>/dev/null || echo 0)}"; }

# Bounded wait: up to $1 tenths of a second for the command in "${@:2}" to succeed.
wait_for() {
  local tenths=$1; shift
  for ((i = 0; i < tenths; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

preflight() {
  for tool in slurmctld slurmd munged ip unshare nsenter tc sinfo; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (.ci/install-fleet-deps installs it)"
  done
  [ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
  ip netns add "${PREFIX}probe" 2>/dev/null || skip "the kernel refuses network namespaces"
  ip netns del "${PREFIX}probe"
  unshare --uts true 2>/dev/null || skip "the kernel refuses UTS namespaces"
}

write_config() {
  local n=$1
  mkdir -p "$DIR"/{state,spool,log,run,tmp}
  cat > "$DIR/slurm.conf" <<CONF
ClusterName=gpucal
SlurmctldHost=${PREFIX}ctl(${SUBNET}.1)
SlurmctldPort=${CTL_PORT}
SlurmdPort=${SLURMD_PORT}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${DIR}/munge.sock
StateSaveLocation=${DIR}/state
SlurmdSpoolDir=${DIR}/spool/node
TmpFS=${DIR}/tmp/node
SlurmctldPidFile=${DIR}/run/slurmctld.pid
SlurmdPidFile=${DIR}/run/slurmd-%n.pid
SlurmctldLogFile=${DIR}/log/slurmctld.log
SlurmdLogFile=${DIR}/log/slurmd-%n.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=600
SlurmctldTimeout=60
MessageTimeout=30
KillWait=5
InactiveLimit=0
MinJobAge=30
TaskProlog=${DIR}/taskprolog
HealthCheckProgram=${DIR}/healthcheck
HealthCheckInterval=${GPUCAL_CLUSTER_HEALTH_INTERVAL:-60}
HealthCheckNodeState=ANY
NodeName=${PREFIX}node[1-${n}] NodeAddr=${SUBNET}.[11-$((10 + n))] CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=fleet Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
}

# Slurm's HealthCheckProgram, run by each slurmd as root at its start and every
# HealthCheckInterval seconds, with a bare environment: it runs $DIR/health.d/NODE where that
# exists (`local_cluster.sh health NODE COMMAND...` writes it), else passes.
write_healthcheck() {
  mkdir -p "$DIR/health.d"
  cat > "$DIR/healthcheck" <<HC
#!/bin/sh
export SLURM_CONF=$DIR/slurm.conf PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
node=\${SLURMD_NODENAME:-\$(hostname)}
[ -x "$DIR/health.d/\$node" ] || exit 0
exec "$DIR/health.d/\$node" >> "$DIR/log/health-\$node.log" 2>&1
HC
  chmod 755 "$DIR/healthcheck"
}

# Slurm's TaskProlog: its "export" lines reach each task's environment.
write_taskprolog() {
  cat > "$DIR/taskprolog" <<'TP'
#!/bin/sh
echo "export OMPI_MCA_btl_tcp_port_min_v4=$((20480 + 128 * ${SLURM_LOCALID:-0}))"
echo "export OMPI_MCA_btl_tcp_port_range_v4=128"
TP
  chmod 755 "$DIR/taskprolog"
}

# The program NODE's health check runs from now on (a shell command line).
set_health() {
  local node=$1; shift
  mkdir -p "$DIR/health.d"
  printf '#!/bin/sh\nexec %s\n' "$*" > "$DIR/health.d/$node.new"
  chmod 755 "$DIR/health.d/$node.new"
  mv "$DIR/health.d/$node.new" "$DIR/health.d/$node"
}

start_munge() {
  [ -f "$DIR/munge.key" ] || { dd if=/dev/urandom of="$DIR/munge.key" bs=1024 count=1 status=none; chmod 400 "$DIR/munge.key"; }
  munged --force --socket="$DIR/munge.sock" --key-file="$DIR/munge.key" --pid-file="$DIR/run/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/run/munged.seed"
  wait_for 50 test -S "$DIR/munge.sock" || die "munged did not start (see $DIR/log/munged.log)"
}

network_up() {
  local n=$1
  ip link add "$BRIDGE" type bridge
  ip addr add "${SUBNET}.1/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((i = 1; i <= n; i++)); do
    local ns; ns=$(netns_of "$i")
    ip netns add "$ns"
    ip link add "${PREFIX}veth$i" type veth peer name eth0 netns "$ns"
    ip link set "${PREFIX}veth$i" master "$BRIDGE" up
    ip -n "$ns" addr add "${SUBNET}.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
  done
}

start_slurmd() {
  local i=$1 name; name=$(node_name "$1")
  # Each node sees its own spool and TmpFS folders at one path (a mount namespace with bind mounts):
  # Slurm's PMIx plugin names a step's sockets and client folders by job and step only, and with
  # %n in the paths it addresses a neighbour step's socket by the unexpanded name.
  mkdir -p "$DIR/spool/$name" "$DIR/tmp/$name" "$DIR/spool/node" "$DIR/tmp/node"
  # nsenter, not `ip netns exec`: that remounts /sys, and slurmd wants the host's cgroup mounts.
  nsenter --net="/run/netns/$(netns_of "$i")" unshare --uts --mount sh -c \
    "mount --bind $DIR/spool/$name $DIR/spool/node && mount --bind $DIR/tmp/$name $DIR/tmp/node &&
     hostname $name && exec slurmd -N $name -f $DIR/slurm.conf" \
    >> "$DIR/log/slurmd-$name.out" 2>&1
}

# The node's slurmd, and whatever of it runs, gone (SIGKILL) while slurmctld still counts the node
# up until its SlurmdTimeout: a job given it cannot start steps there. `clear` starts it again.
slurmd_pids() { for pid in $(ip netns pids "$(netns_of "$1")"); do [ "$(cat /proc/$pid/comm 2>/dev/null)" = slurmd ] && echo "$pid"; done; }
slurmd_running() { [ -n "$(slurmd_pids "$1")" ]; }
node_responding() { local state; state=$(sinfo -h -N -n "$1" -o %T); [ -n "$state" ] && [ "${state%\*}" = "$state" ]; }
fault_slurmd() {
  local i pids; i=$(node_index "$1"); pids=$(slurmd_pids "$i")
  [ -n "$pids" ] || die "fault slurmd: no slurmd runs in $(netns_of "$i")"
  kill -KILL $pids
  echo "$1" >> "$DIR/slurmd-killed"
}

start_daemons() {
  local n=$1
  export SLURM_CONF=$DIR/slurm.conf
  unshare --uts sh -c "hostname ${PREFIX}ctl && exec slurmctld -c -f $DIR/slurm.conf" \
    > "$DIR/log/slurmctld.out" 2>&1
  wait_for 100 test -s "$DIR/run/slurmctld.pid" || die "slurmctld did not start (see $DIR/log/slurmctld.log)"
  for ((i = 1; i <= n; i++)); do start_slurmd "$i"; done
  # Every node idle, or the cluster is not ready (bounded: 60 s).
  wait_for 600 sh -c "[ \"\$(sinfo -h -N -t idle -o %N | wc -l)\" -ge $n ]" ||
    die "nodes not idle after 60 s: $(sinfo -N -h -o '%N %T' | tr '\n' ' ')"
}

up() {
  local n=${1:-6}
  [ "$n" -ge 1 ] && [ "$n" -le 60 ] || die "NODES: expected 1..60, got '$n'"
  preflight
  [ ! -e "$DIR/nodes" ] || die "a cluster is up in $DIR; run '$0 down' first"
  mkdir -p "$DIR"
  echo "$n" > "$DIR/nodes"
  trap 'down >/dev/null 2>&1 || true' ERR
  write_config "$n"
  write_healthcheck
  write_taskprolog
  network_up "$n"
  start_munge
  start_daemons "$n"
  trap - ERR
  echo "local_cluster: $n nodes up ($(node_name 1)..$(node_name "$n") on ${SUBNET}.0/24); SLURM_CONF=$DIR/slurm.conf"
}

kill_pidfile() {
  local file=$1
  [ -s "$file" ] || return 0
  local pid; pid=$(cat "$file")
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  wait_for 50 sh -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null || true
  rm -f "$file"
}

down() {
  # Every namespace of ours, also those of a run that was killed before it could stop them.
  local n; n=$(node_count)
  local listed; listed=$(ip netns list 2>/dev/null | sed -n "s/^${PREFIX}ns\([0-9]*\).*/\1/p" | sort -n | tail -1)
  [ -z "$listed" ] || [ "$listed" -le "$n" ] || n=$listed
  NODE_COUNT_OVERRIDE=$n clear_faults || true
  for ((i = 1; i <= n; i++)); do
    local ns; ns=$(netns_of "$i")
    # Everything in the namespace: slurmd, its steps, ranks of jobs (continued first if stopped).
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || { kill -CONT $pids 2>/dev/null || true; kill -TERM $pids 2>/dev/null || true; }
  done
  sleep 1
  for ((i = 1; i <= n; i++)); do
    local pids; pids=$(ip netns pids "$(netns_of "$i")" 2>/dev/null || true)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    rm -f "$DIR/run/slurmd-$(node_name "$i").pid"
  done
  kill_pidfile "$DIR/run/slurmctld.pid"
  kill_pidfile "$DIR/run/munged.pid"
  for ((i = 1; i <= n; i++)); do
    ip netns del "$(netns_of "$i")" 2>/dev/null || true
    ip link del "${PREFIX}veth$i" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -f "$DIR/nodes"
  echo "local_cluster: down"
}

node_index() {
  local name=$1 n; n=$(node_count)
  for ((i = 1; i <= n; i++)); do [ "$(node_name "$i")" = "$name" ] && { echo "$i"; return; }; done
  die "no node '$name' (nodes: $(node_name 1)..$(node_name "$n"))"
}

# Both directions of the node's only link: the bridge side shapes what reaches it, the
# namespace side what it sends. The bucket's burst: 32 kbit, or 1 ms of the rate where that is
# more (16gbit: 2 MB). A burst far below the rate's packets caps lower than asked (with 32 kbit, a
# 16gbit cap passed 1.4 Gbit/s); one far above lets a bench's messages through at full speed.
fault_link() {
  local i burst; i=$(node_index "$1")
  burst=$(python3 -c 'import re,sys; m=re.fullmatch(r"([0-9.]+)([kmg]?)bit",sys.argv[1].lower())
if not m: sys.exit("fault link: RATE like 8mbit or 16gbit, got "+sys.argv[1])
b=float(m[1])*{"":1,"k":1e3,"m":1e6,"g":1e9}[m[2]]
print("%db" % max(4000, b/8/1000))' "$2") || die "fault link: bad RATE '$2'"
  tc qdisc replace dev "${PREFIX}veth$i" root tbf rate "$2" burst "$burst" latency 400ms
  tc -n "$(netns_of "$i")" qdisc replace dev eth0 root tbf rate "$2" burst "$burst" latency 400ms
}

# Only the packets to or from rank RAIL's ports (the TaskProlog's range), both ways: an HTB root
# whose default class is unlimited and whose class 1:20, at RATE, takes that port range (source or
# destination) through u32 filters. (HTB and u32 are what this kernel has; no prio, no netem.)
fault_rail() {
  local i port; i=$(node_index "$1"); port=$((20480 + 128 * $2))
  for tcx in "tc" "tc -n $(netns_of "$i")"; do
    local dev; dev=$([ "$tcx" = tc ] && echo "${PREFIX}veth$i" || echo eth0)
    $tcx qdisc replace dev "$dev" root handle 1: htb default 10
    $tcx class add dev "$dev" parent 1: classid 1:10 htb rate 100gbit quantum 60000
    $tcx class add dev "$dev" parent 1: classid 1:20 htb rate "$3" ceil "$3" quantum 60000
    for dir in sport dport; do
      $tcx filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip "$dir" "$port" 0xff80 flowid 1:20
    done
  done
}

# A lossy port: every packet into or out of the node dropped with probability PERCENT / 100
# (nftables' numgen in its namespace; this kernel has nf_tables and numgen, not netem).
fault_loss() {
  local i; i=$(node_index "$1")
  command -v nft >/dev/null || skip "no nft (Debian's nftables)"
  ip netns exec "$(netns_of "$i")" nft -f - <<NFT
table inet ${PREFIX}_loss {
  chain in { type filter hook input priority 0; numgen random mod 100 < $2 drop; }
  chain out { type filter hook output priority 0; numgen random mod 100 < $2 drop; }
}
NFT
}

# slurmd's cgroup: every step it starts afterwards (proctrack/pgid leaves them there) inherits it.
fault_cpu() {
  local i name; i=$(node_index "$1"); name=$(node_name "$i")
  [ -d "$CGROUP_CPU" ] || skip "no cgroup v1 cpu controller at $CGROUP_CPU"
  mkdir -p "$CGROUP_CPU/${PREFIX}-$name"
  cat "$CGROUP_CPU/cpu.cfs_period_us" > "$CGROUP_CPU/${PREFIX}-$name/cpu.cfs_period_us"
  echo $(( $(cat "$CGROUP_CPU/cpu.cfs_period_us") * $2 / 100 )) > "$CGROUP_CPU/${PREFIX}-$name/cpu.cfs_quota_us"
  for pid in $(ip netns pids "$(netns_of "$i")"); do echo "$pid" > "$CGROUP_CPU/${PREFIX}-$name/cgroup.procs"; done
}

fault_stop() {
  local i; i=$(node_index "$1")
  local pids; pids=$(ip netns pids "$(netns_of "$i")")
  [ -z "$pids" ] || kill -STOP $pids
  echo "$1" >> "$DIR/stopped"
}

clear_faults() {
  local n; n=$(node_count)
  for ((i = 1; i <= n; i++)); do
    tc qdisc del dev "${PREFIX}veth$i" root 2>/dev/null || true
    tc -n "$(netns_of "$i")" qdisc del dev eth0 root 2>/dev/null || true
    ip netns exec "$(netns_of "$i")" nft delete table inet "${PREFIX}_loss" 2>/dev/null || true
    local group="$CGROUP_CPU/${PREFIX}-$(node_name "$i")"
    if [ -d "$group" ]; then
      for pid in $(cat "$group/cgroup.procs"); do echo "$pid" > "$CGROUP_CPU/cgroup.procs" 2>/dev/null || true; done
      rmdir "$group" 2>/dev/null || true
    fi
    local pids; pids=$(ip netns pids "$(netns_of "$i")" 2>/dev/null || true)
    [ -z "$pids" ] || kill -CONT $pids 2>/dev/null || true
  done
  rm -f "$DIR/stopped"
  if [ -f "$DIR/slurmd-killed" ]; then
    export SLURM_CONF=$DIR/slurm.conf
    local name
    for name in $(sort -u "$DIR/slurmd-killed"); do
      local i; i=$(node_index "$name")
      start_slurmd "$i"
      # Running again; a drain gpucal set stays (whoever planted the fault resumes the node).
      wait_for 100 slurmd_running "$i" || die "slurmd of $name did not start again"
      # ... and answering slurmctld again (no "*" on its state): a job's end found it gone.
      wait_for 300 node_responding "$name" || die "slurmd of $name does not answer slurmctld again"
    done
    rm -f "$DIR/slurmd-killed"
  fi
}

case "${1:-}" in
  up) up "${2:-6}" ;;
  down) down ;;
  env) echo "export SLURM_CONF=$DIR/slurm.conf" ;;
  health) [ $# -ge 3 ] || die "health: expected NODE COMMAND..."; set_health "$2" "${@:3}" ;;
  fault)
    case "${2:-}" in
      link) fault_link "$3" "$4" ;;
      rail) fault_rail "$3" "$4" "$5" ;;
      loss) fault_loss "$3" "$4" ;;
      cpu) fault_cpu "$3" "$4" ;;
      stop) fault_stop "$3" ;;
      slurmd) fault_slurmd "$3" ;;
      clear) clear_faults ;;
      *) die "fault: expected link NODE RATE | rail NODE RAIL RATE | loss NODE PERCENT | cpu NODE PERCENT | stop NODE | slurmd NODE | clear" ;;
    esac ;;
  *) echo "usage: $0 up [NODES] | down | env | health NODE COMMAND... | fault link|rail|loss|cpu|stop|slurmd|clear ..." >&2; exit 2 ;;
esac

# shellcheck shell=bash
# The end-to-end experiment's plumbing (sourced by tests/e2e/run.sh and
# tests/integration/e2e_smoke.sh; not run on its own).
#
#   e2e_usage            the calling script's header comment (its usage) to
#                        stderr, exit 2: for a bad option
#   e2e_args SPEC ARGS   E_SRC, E_BUILD, E_OUT and the calling script's options
#   e2e_out_init NAME    $E_OUT (default tests/e2e/out/NAME-<date>) created,
#                        absolute and exported; one holding runs.jsonl refused
#   e2e_setup            root/tool checks (exit 77 when something is missing),
#                        work dir $E_TMP, the sender's namespace $E_NS_S
#                        ($E_ADDR_S) joined by a veth pair to the root
#                        namespace ($E_ADDR_R), where the receiver and rxbneckd
#                        run as on a real receiving host; an EXIT/INT/TERM trap
#                        undoes all of it
#   e2e_daemon_start     rxbneckd (root namespace), pinned to $E_SEND_CPU,
#                        plus the status poller
#   e2e_setup_pinned     e2e_setup, then this shell (and what it starts) on
#                        $E_SEND_CPU, off the receiver's CPU
#   e2e_hogs, e2e_k_begin, e2e_wait_cb, e2e_load ...: the k tasks on the
#                        receiver's CPU, in lib_load.sh (sourced at the end)
#   e2e_run MODE RATE REP  one transfer; appends one JSON line to $E_OUT/runs.jsonl
#   e2e_tcp REP [mtu] [delay]  one TCP copy of the same bytes (iperf3);
#                        with "delay" over rxbneck-delayline (below)
#
# Every number a run produces goes to $E_OUT/runs.jsonl; nothing is dropped.
E_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)	# tests/e2e: runrec.py for the inline Python
# Settings (environment, with defaults):
E_BUILD=${E_BUILD:-build}
E_SIZE=${E_SIZE:-200M}		# file size (synthetic data)
E_DELAY_MS=${E_DELAY_MS:-100}	# emulated one-way delay, Banerjee et al.'s (sender's HELLO RTT = 2x)
E_RCVBUF=${E_RCVBUF:-4Mi}	# receiver's SO_RCVBUF request (kernel doubles it)
E_RECV_ARGS=${E_RECV_ARGS:-}	# more rxbneck-recv options, e.g. --busy-poll
E_EPOCH_MS=${E_EPOCH_MS:-250}	# rxbneckd epoch
E_NET_PROBE_EVERY=${E_NET_PROBE_EVERY:-}	# [measure] net_probe_every ("": default)
E_LOSS_EPISODES=${E_LOSS_EPISODES:-}	# [model] loss_episodes ("": the daemon's default)
E_DEPTH_COST=${E_DEPTH_COST:-}	# [model] queue_depth_cost ("": the daemon's default)
E_QUOTA_PHASES=${E_QUOTA_PHASES:-}	# [model] quota_phases ("": the daemon's default)
E_RATE_UNC=${E_RATE_UNC:-}	# [model] rate_uncertainty ("": the daemon's default)
E_TIME_SLACK=${E_TIME_SLACK:-}	# [model] time_slack ("": the daemon's default)
E_DRAIN_FLOOR=${E_DRAIN_FLOOR:-}	# [model] drain_floor ("": the daemon's default)
E_MODEL_LOSS=${E_MODEL_LOSS:-}	# [model] loss ("": the daemon's default)
E_MODEL_CAPACITY=${E_MODEL_CAPACITY:-}	# [model] capacity ("": the daemon's default)
E_LINE_RATE=${E_LINE_RATE:-10G}	# the sender's ceiling (--max-rate): the top of the sweep
E_MIN_RATE=${E_MIN_RATE:-100M}
# 1: send a real file of random bytes (--file) and write what arrives
# (--output), then compare the two with cmp; the run's record gets
# "file_identical". 0 (the experiment): synthetic data, receiver --discard:
# no file in memory or on disk, so no digest check either; only each
# datagram's check applies (the session token; docs/rbudp.md §4.4).
E_VERIFY=${E_VERIFY:-0}
# 1: trace each transfer's socket queue and receiver CPU time every 0.4 ms
# (tests/e2e/qtrace.py poll, pinned to the sender's CPU, a few per cent of
# it) into $E_OUT/qtrace/MODE-RATE-TAG-REP-N.txt (docs/e2e.md §2).
E_QTRACE=${E_QTRACE:-0}
# Ports and subnet differ per run (two runs never share them): the receive
# port (UDP data and RBUDP's TCP control), rxbneckd's sender control port,
# iperf3's port.
_e2e_base=$((20000 + ($$ % 4000) * 3))
E_PORT=${E_PORT:-$_e2e_base}
E_CPORT=${E_CPORT:-$((_e2e_base + 1))}
E_TCP_PORT=${E_TCP_PORT:-$((_e2e_base + 2))}
E_NET=10.232.$(($$ % 250))
E_RECV_CPU=${E_RECV_CPU:-1}
E_SEND_CPU=${E_SEND_CPU:-0}
# 1: tx-udp-segmentation off on the sender's veth, every datagram its own
# skb through the veth (the sender then tops out at 6 Gb/s); 0: its GSO
# packets cross whole and are cut at the UDP socket, and it reaches 10 Gb/s
# (docs/e2e.md §1)
E_USO_OFF=${E_USO_OFF:-0}
E_RPS=${E_RPS:-0}		# 1: RPS steers the receive softirq to $E_RECV_CPU
E_LOCK=${E_LOCK:-/tmp/rxbneck-heavy.lock}
E_DAEMON_EXTRA=${E_DAEMON_EXTRA:-}	# more lines at the end of rxbneckd's configuration

E_PIDS=()
E_HOGS_PID=
E_DPID=
E_POLL_PID=

e2e_log() { echo "[$(date +%T)] $*" >&2; }
e2e_fail() { e2e_log "FAIL: $*"; exit 1; }
e2e_skip() { e2e_log "SKIP: $*"; exit 77; }
e2e_usage() { sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# e2e_args SPEC "$@": an experiment script's start. E_SRC the checkout,
# E_BUILD its build directory, E_OUT empty (-o sets it, else e2e_out_init),
# then the script's options by SPEC, a word each: L:VAR, -L takes a value
# and VAR gets it; L=VAR=VALUE, -L alone sets VAR to VALUE. Another option
# is e2e_usage. A word after the options is an error: a list given without
# quotes (-r 2G 3G) would otherwise keep only its first word, silently.
e2e_args() {
	local spec=$1 word letters= o OPTARG OPTIND=1
	shift
	E_SRC=$(cd "$E_LIB/../.." && pwd)
	E_BUILD=$E_SRC/build
	E_OUT=
	for word in $spec; do
		case $word in
		?:?*) letters+=${word:0:2} ;;
		?=?*=*) letters+=${word:0:1} ;;
		*) e2e_fail "e2e_args: '$word' is not L:VAR or L=VAR=VALUE" ;;
		esac
	done
	while getopts "$letters" o; do
		for word in $spec; do
			case $word in
			"$o:"*) printf -v "${word:2}" '%s' "$OPTARG"; continue 2 ;;
			"$o="*) word=${word:2}; printf -v "${word%%=*}" '%s' "${word#*=}"; continue 2 ;;
			esac
		done
		e2e_usage
	done
	shift $((OPTIND - 1))
	[ $# -eq 0 ] || e2e_fail "unexpected argument '$1' (a list is one quoted word: -r \"2G 3G\")"
}

# e2e_out_init NAME: the output directory. Runs append to runs.jsonl, so a
# directory that has one already belongs to another experiment.
e2e_out_init() {
	[ -n "${E_OUT:-}" ] || E_OUT=$E_SRC/tests/e2e/out/${1:+$1-}$(date +%Y%m%d-%H%M%S)
	E_OUT=$(mkdir -p "$E_OUT" && cd "$E_OUT" && pwd) || e2e_fail "cannot create $E_OUT"
	[ -s "$E_OUT/runs.jsonl" ] && e2e_fail "$E_OUT/runs.jsonl exists: use a new output directory"
	export E_OUT
}

e2e_cleanup() {
	local p
	[ -n "$E_HOGS_PID" ] && kill "$E_HOGS_PID" 2>/dev/null
	e2e_load_stop
	for p in "${E_PIDS[@]}" $E_POLL_PID $E_DPID; do
		kill "$p" 2>/dev/null
	done
	for p in $E_HOGS_PID "${E_PIDS[@]}" $E_POLL_PID $E_DPID; do
		wait "$p" 2>/dev/null
	done
	# Deleting the namespace deletes the veth pair, both ends.
	if [ -n "${E_DL_PID:-}" ]; then
		kill "$E_DL_PID" 2>/dev/null
		wait "$E_DL_PID" 2>/dev/null
	fi
	[ -n "${E_DL_IF_R:-}" ] && ip link del "$E_DL_IF_R" 2>/dev/null
	[ -n "${E_NS_S:-}" ] && ip netns del "$E_NS_S" 2>/dev/null
	[ -n "${E_IF_R:-}" ] && ip link del "$E_IF_R" 2>/dev/null
	[ -n "${E_TMP:-}" ] && rm -rf "$E_TMP"
	return 0
}

# e2e_setup, then this shell on the sender's CPU: everything it starts stays
# off the receiver's CPU unless placed there on purpose (the receiver, the
# hogs), where it would count as foreign load.
e2e_setup_pinned() {
	e2e_setup
	taskset -pc "$E_SEND_CPU" $$ > /dev/null || e2e_fail "taskset"
}

e2e_setup() {
	local b
	[ "$(id -u)" -eq 0 ] || e2e_skip "needs root (BPF, network namespaces)"
	[ "$(nproc)" -ge 2 ] || e2e_skip "needs 2 CPUs"
	for b in ip ethtool taskset stress-ng iperf3 flock /usr/bin/python3; do
		command -v "$b" > /dev/null || e2e_skip "$b not installed"
	done
	E_BIN=$(cd "$E_BUILD" 2>/dev/null && pwd) || e2e_skip "no build directory $E_BUILD"
	for b in rxbneck-send rxbneck-recv rxbneckd rxbneckctl; do
		[ -x "$E_BIN/$b" ] || e2e_skip "$E_BIN/$b not built"
	done
	[ -n "${E_OUT:-}" ] || e2e_fail "E_OUT not set"
	mkdir -p "$E_OUT" || e2e_fail "cannot create $E_OUT"
	trap e2e_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	E_TMP=$(mktemp -d /tmp/rxbe2e.XXXXXX) || e2e_fail "mktemp"
	if [ "$E_VERIFY" = 1 ]; then
		head -c "$(e2e_bytes "$E_SIZE")" /dev/urandom > "$E_TMP/src.bin" ||
			e2e_fail "cannot write the source file"
	fi
	E_NS_S=rxbe2e-s-$$
	E_IF_S=e2es$$
	E_IF_R=e2er$$
	E_ADDR_S=$E_NET.1
	E_ADDR_R=$E_NET.2
	ip netns add "$E_NS_S" &&
	ip link add "$E_IF_R" type veth peer name "$E_IF_S" netns "$E_NS_S" &&
	ip -n "$E_NS_S" addr add "$E_ADDR_S/24" dev "$E_IF_S" &&
	ip addr add "$E_ADDR_R/24" dev "$E_IF_R" &&
	ip -n "$E_NS_S" link set "$E_IF_S" up && ip link set "$E_IF_R" up &&
	ip -n "$E_NS_S" link set lo up ||
		e2e_fail "cannot create the sender's namespace and veth pair"
	if [ "$E_USO_OFF" = 1 ]; then
		ip netns exec "$E_NS_S" ethtool -K "$E_IF_S" tx-udp-segmentation off > /dev/null ||
			e2e_fail "cannot turn tx-udp-segmentation off"
	fi
	# veth hands every datagram to the backlog of the CPU that sent it, so
	# by default the receive softirq (stage A) runs on the sender's CPU and
	# a drop costs the receiving CPU nothing. With RPS the receiving end's
	# queue steers it to the receiver's CPU, where the hogs are: the host
	# of Banerjee et al.'s model, whose NIC, stack and receiver share one CPU.
	if [ "$E_RPS" = 1 ]; then
		printf '%x\n' $((1 << E_RECV_CPU)) > "/sys/class/net/$E_IF_R/queues/rx-0/rps_cpus" ||
			e2e_fail "cannot set rps_cpus of $E_IF_R"
	fi
	e2e_delayline_up
}

# e2e_delayline_up: the emulated path for TCP. rxbneck-send and -recv delay
# their own blasts and feedback; TCP needs the delay on the path, and this
# kernel has no netem. The sender's namespace gets a second address
# $E_ADDR_SD on a TUN device; the root namespace routes that address (a
# /32, more specific than the veth's /24) to its own TUN device, and
# rxbneck-delayline, pinned to the sender's CPU and SCHED_FIFO there (so
# that the busy TCP sender does not delay its releases), carries packets
# from the one to the other 2 x E_DELAY_MS later. A TCP sender bound to $E_ADDR_SD
# then sends its data over the veth at full speed and gets its ACKs one
# round trip late: its RTT is the RBUDP runs' 2 x E_DELAY_MS, all of it on
# the return path. The sender's namespace is given the root namespace's
# tcp_rmem maximum as its tcp_wmem maximum, so that its send buffer does
# not cap the window below what the receiver allows (a new namespace has
# the kernel's 4 MiB). Sets E_DL_OK=1 when the line is up; without the
# tool or with a delay of 0, TCP runs only without delay.
E_DL_OK=0
e2e_delayline_up() {
	local rmax
	rmax=$(sysctl -n net.ipv4.tcp_rmem | awk '{print $3}')
	ip netns exec "$E_NS_S" sysctl -qw net.ipv4.tcp_wmem="4096 16384 $rmax" ||
		e2e_fail "cannot set tcp_wmem in $E_NS_S"
	[ "$E_DELAY_MS" != 0 ] || return 0
	if [ ! -x "$E_BIN/rxbneck-delayline" ]; then
		e2e_log "no $E_BIN/rxbneck-delayline: TCP runs without delay only"
		return 0
	fi
	if [ "$(sysctl -n net.ipv4.conf.all.rp_filter)" != 0 ]; then
		e2e_log "net.ipv4.conf.all.rp_filter is on: the return path through the delay line" \
			"would be filtered; TCP runs without delay only"
		return 0
	fi
	E_ADDR_SD=$E_NET.3
	E_DL_IF_R=e2edr$$
	E_DL_IF_S=e2eds$$
	ip tuntap add dev "$E_DL_IF_R" mode tun &&
	ip -n "$E_NS_S" tuntap add dev "$E_DL_IF_S" mode tun &&
	ip -n "$E_NS_S" addr add "$E_ADDR_SD/32" dev "$E_DL_IF_S" &&
	ip -n "$E_NS_S" link set "$E_DL_IF_S" up && ip link set "$E_DL_IF_R" up &&
	ip route add "$E_ADDR_SD/32" dev "$E_DL_IF_R" &&
	sysctl -qw "net.ipv4.conf.$E_IF_R.rp_filter=0" &&
	ip netns exec "$E_NS_S" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		"net.ipv4.conf.$E_DL_IF_S.rp_filter=0" ||
		e2e_fail "cannot set up the delay line's TUN devices"
	taskset -c "$E_SEND_CPU" "$E_BIN/rxbneck-delayline" --from "$E_DL_IF_R" --to "$E_DL_IF_S" \
		--to-netns "$E_NS_S" --delay-ms $((2 * E_DELAY_MS)) --rt-prio 50 --json \
		> "$E_OUT/delayline.json" 2> "$E_TMP/delayline.err" &
	E_DL_PID=$!
	for _ in $(seq 100); do
		grep -q ready "$E_TMP/delayline.err" && break
		sleep 0.05
	done
	grep -q ready "$E_TMP/delayline.err" ||
		e2e_fail "rxbneck-delayline did not start: $(cat "$E_TMP/delayline.err")"
	E_DL_OK=1
	e2e_log "delay line up: TCP from $E_ADDR_SD gets its ACKs $((2 * E_DELAY_MS)) ms late"
}

e2e_bytes() {	# e2e_bytes SIZE: bytes of a size with suffix k M G (10^3..), Ki Mi Gi (2^10..)
	/usr/bin/python3 -c "
s='$1'; u={'k':10**3,'M':10**6,'G':10**9,'Ki':2**10,'Mi':2**20,'Gi':2**30}
for x in ('Ki','Mi','Gi','k','M','G'):
    if s.endswith(x): print(int(float(s[:-len(x)])*u[x])); break
else: print(int(s))"
}

e2e_bg() {	# e2e_bg VAR CMD...
	local var=$1
	shift
	"$@" &
	E_PIDS+=($!)
	printf -v "$var" '%s' "$!"
}

e2e_ctl() { "$E_BIN/rxbneckctl" -s "$E_TMP/run/ctl.sock" "$@"; }
# e2e_py ARGS...: python3 with tests/e2e on its path (runrec.py, for the
# inline scripts) and no __pycache__ written beside the scripts.
e2e_py() { PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$E_LIB /usr/bin/python3 "$@"; }

# e2e_conf_daemon: the [daemon] section of an rxbneckd configuration: its
# state and runtime directories in $E_TMP, its control socket where
# e2e_ctl looks.
e2e_conf_daemon() {
	printf '%s\n' "[daemon]" "state_dir = $E_TMP/state" "runtime_dir = $E_TMP/run" \
		"ctl_socket = $E_TMP/run/ctl.sock"
}

e2e_daemon_start() {
	mkdir -p "$E_TMP/state" "$E_TMP/run"
	{ e2e_conf_daemon; cat <<-EOF; } > "$E_TMP/d.conf"
	[measure]
	interval_ms = $E_EPOCH_MS
	# No BPF run-time statistics: they add two clock reads to every BPF
	# program run on the host, other users' too, and the daemon runs on
	# between the k's while the heavy lock is released.
	bpf_stats = no
	${E_NET_PROBE_EVERY:+net_probe_every = $E_NET_PROBE_EVERY}
	watch_ports = $E_PORT $E_TCP_PORT
	devices = $E_IF_R
	[model]
	min_rate_bps = $E_MIN_RATE
	${E_LOSS_EPISODES:+loss_episodes = $E_LOSS_EPISODES}
	${E_DEPTH_COST:+queue_depth_cost = $E_DEPTH_COST}
	${E_QUOTA_PHASES:+quota_phases = $E_QUOTA_PHASES}
	${E_RATE_UNC:+rate_uncertainty = $E_RATE_UNC}
	${E_TIME_SLACK:+time_slack = $E_TIME_SLACK}
	${E_DRAIN_FLOOR:+drain_floor = $E_DRAIN_FLOOR}
	${E_MODEL_LOSS:+loss = $E_MODEL_LOSS}
	${E_MODEL_CAPACITY:+capacity = $E_MODEL_CAPACITY}
	[control]
	listen_address = $E_ADDR_R
	port = $E_CPORT
	allow = $E_NET.0/24
	push_every_epochs = 1
	${E_DAEMON_EXTRA:-}
	EOF
	e2e_daemon_run
}

# e2e_daemon_run: rxbneckd with $E_TMP/d.conf (its state and runtime
# directories under $E_TMP), pinned to $E_SEND_CPU, plus the status poller.
e2e_daemon_run() {
	mkdir -p "$E_TMP/state" "$E_TMP/run"
	cp "$E_TMP/d.conf" "$E_OUT/rxbneckd.conf"
	taskset -c "$E_SEND_CPU" "$E_BIN/rxbneckd" -f -c "$E_TMP/d.conf" \
		2>> "$E_OUT/rxbneckd.log" &
	E_DPID=$!
	for _ in $(seq 100); do
		e2e_ctl status > /dev/null 2>&1 && break
		kill -0 "$E_DPID" 2>/dev/null || e2e_fail "rxbneckd exited during start-up (see $E_OUT/rxbneckd.log)"
		sleep 0.1
	done
	e2e_ctl status > /dev/null 2>&1 || e2e_fail "rxbneckd did not answer within 10 s"
	taskset -c "$E_SEND_CPU" /usr/bin/python3 "$E_SRC/tests/e2e/poll_status.py" \
		"$E_TMP/run/ctl.sock" "$E_OUT/status.jsonl" 0.1 &
	E_POLL_PID=$!
}

e2e_daemon_stop() {
	[ -n "$E_POLL_PID" ] && { kill "$E_POLL_PID" 2>/dev/null; wait "$E_POLL_PID" 2>/dev/null; }
	E_POLL_PID=
	[ -n "$E_DPID" ] && { kill "$E_DPID" 2>/dev/null; wait "$E_DPID" 2>/dev/null; }
	E_DPID=
}

e2e_stat_cpu() {	# total and steal jiffies of the machine
	local u n sy id io irq sirq st
	read -r _ u n sy id io irq sirq st _ < /proc/stat
	echo "$((u + n + sy + id + io + irq + sirq + st)) $st"
}

# e2e_span_begin, e2e_span_end: a run's monotonic start and end (E_T0,
# E_T1, seconds) and the share of the machine's CPU time stolen in between
# (E_STEAL_PCT, %), the fields every runs.jsonl record has.
e2e_span_begin() {
	read -r E_SPAN_TOT0 E_SPAN_ST0 <<< "$(e2e_stat_cpu)"
	E_T0=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
}
e2e_span_end() {
	local tot st
	E_T1=$(/usr/bin/python3 -c 'import time; print(time.monotonic())')
	read -r tot st <<< "$(e2e_stat_cpu)"
	E_STEAL_PCT=$(( 100 * (st - E_SPAN_ST0) / (tot - E_SPAN_TOT0 + 1) ))
}

# e2e_run MODE RATE REP [EXTRA]: one RBUDP transfer. MODE: fixed (RATE
# used), follow, follow-nopause (RATE ignored: the daemon's). Appends
# {"k", "mode", "rate_req_bps", "rep", "t_start_mono", "t_end_mono",
#  "steal_pct", "send": sender JSON, "recv": receiver JSON} to runs.jsonl.
e2e_run() {
	local mode=$1 rate=$2 rep=$3 tag=${4:-main} rpid sargs src=0
	local qpid= qfile
	local what=(--size "$E_SIZE") dst=(--discard) same=null
	case $mode in
	fixed) sargs=(--rate "$rate") ;;
	follow) sargs=(--follow "$E_ADDR_R:$E_CPORT" --max-rate "$E_LINE_RATE") ;;
	follow-nopause) sargs=(--follow "$E_ADDR_R:$E_CPORT" --max-rate "$E_LINE_RATE" --no-pause) ;;
	*) e2e_fail "mode $mode" ;;
	esac
	if [ "$E_VERIFY" = 1 ]; then
		what=(--file "$E_TMP/src.bin")
		dst=(--output "$E_TMP/dst.bin")
	fi
	rm -f "$E_TMP/s.json" "$E_TMP/r.json" "$E_TMP/dst.bin"
	if [ "$E_QTRACE" = 1 ]; then
		mkdir -p "$E_OUT/qtrace" || e2e_fail "mkdir $E_OUT/qtrace"
		qfile=$E_OUT/qtrace/$mode-$rate-$tag-$rep-$(ls "$E_OUT/qtrace" | wc -l).txt
		taskset -c "$E_SEND_CPU" /usr/bin/python3 "$E_SRC/tests/e2e/qtrace.py" poll \
			"$E_PORT" "$qfile" 2> "$E_TMP/q.err" &
		qpid=$!
	fi
	e2e_bg rpid taskset -c "$E_RECV_CPU" "$E_BIN/rxbneck-recv" \
		--port "$E_PORT" --listen "$E_ADDR_R" "${dst[@]}" --quiet --json --cpu "$E_RECV_CPU" \
		--rcvbuf "$E_RCVBUF" $E_RECV_ARGS > "$E_TMP/r.json" 2> "$E_TMP/r.err"
	# Until the receiver listens on its TCP port.
	for _ in $(seq 50); do
		ss -Htln "sport = :$E_PORT" | grep -q . && break
		sleep 0.02
	done
	e2e_span_begin
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" "$E_BIN/rxbneck-send" --to "$E_ADDR_R" \
		--port "$E_PORT" "${what[@]}" --one-way-delay-ms "$E_DELAY_MS" --quiet --json \
		--timeout 20 "${sargs[@]}" > "$E_TMP/s.json" 2> "$E_TMP/s.err" || src=$?
	wait "$rpid" 2>/dev/null
	if [ -n "$qpid" ] && ! wait "$qpid"; then
		e2e_log "  queue trace: $(tail -1 "$E_TMP/q.err")"
	fi
	e2e_span_end
	if [ "$E_VERIFY" = 1 ]; then
		same=false
		cmp -s "$E_TMP/src.bin" "$E_TMP/dst.bin" && same=true
		rm -f "$E_TMP/dst.bin"
	fi
	e2e_py - "$E_TMP" "$E_OUT/runs.jsonl" "$E_K" "$mode" "$rate" "$rep" \
		"$E_T0" "$E_T1" "$E_STEAL_PCT" "$src" "$tag" "$E_DELAY_MS" "$same" <<'PY'
import json, sys
from runrec import first_json
d, out = sys.argv[1], sys.argv[2]
def text(name):
    try:
        return open(d + "/" + name).read()[-2000:]
    except OSError:
        return ""
units = {"k": 1e3, "M": 1e6, "G": 1e9}
r = sys.argv[5]
rate = None
if sys.argv[4] == "fixed":
    rate = float(r[:-1]) * units[r[-1]] if r[-1] in units else float(r)
rec = {"k": int(sys.argv[3]), "mode": sys.argv[4], "tag": sys.argv[11],
       "rate_req_bps": rate, "one_way_delay_ms": float(sys.argv[12]),
       "rep": int(sys.argv[6]), "t_start_mono": float(sys.argv[7]),
       "t_end_mono": float(sys.argv[8]), "steal_pct": int(sys.argv[9]),
       "sender_exit": int(sys.argv[10]), "send": first_json(d, "s.json"),
       "recv": first_json(d, "r.json"),
       "file_identical": json.loads(sys.argv[13])}
if rec["send"] is None or not rec["send"].get("ok"):
    rec["send_err"] = text("s.err")
    rec["recv_err"] = text("r.err")
with open(out, "a") as f:
    f.write(json.dumps(rec) + "\n")
s = rec["send"] or {}
if s.get("ok"):
    r1 = s["per_round"][0]
    print("k=%d %-14s %6s rep %d: T %.3f s, %d rounds, first-round loss %.2f %%, rate %.3f Gb/s"
          % (rec["k"], rec["mode"], sys.argv[5] if rec["mode"] == "fixed" else "-", rec["rep"],
             s["transfer_time_s"], s["rounds"], 100.0 * r1["pkts_lost"] / max(1, r1["pkts_sent"]),
             r1["rate_requested_bps"] / 1e9), file=sys.stderr)
else:
    print("k=%d %s %s rep %d: FAILED (%s)" % (rec["k"], rec["mode"], sys.argv[5], rec["rep"],
          (s.get("error") or rec.get("send_err", "")).strip()[-300:]), file=sys.stderr)
PY
}

# e2e_tcp REP [mtu] [delay]: the same bytes over TCP (iperf3 -n), receiver
# pinned like rxbneck-recv, with the host's TCP buffer autotuning. Without
# "delay" a zero-added-delay copy; with it the sender binds to $E_ADDR_SD
# and its ACKs come back through the delay line (RTT 2 x E_DELAY_MS, as
# the RBUDP runs'). veth passes TCP's 64 KiB TSO segments whole to the
# receiving socket; with "mtu" TSO and GSO are off on the sender's veth for
# the run, so every 1500-byte packet is its own skb on the receive side, as
# from a NIC without GRO/LRO. Appends {"mode": "tcp", "tcp-mtu",
# "tcp-delay" or "tcp-mtu-delay", ...}.
# e2e_iperf3_server VAR: a one-shot iperf3 server on the receiver's CPU,
# listening on $E_ADDR_R:$E_TCP_PORT (its JSON into $E_TMP/tcp_s.json); its
# pid into VAR.
e2e_iperf3_server() {
	e2e_bg "$1" taskset -c "$E_RECV_CPU" iperf3 -s -1 -p "$E_TCP_PORT" -B "$E_ADDR_R" \
		--json > "$E_TMP/tcp_s.json" 2>&1
	for _ in $(seq 50); do
		ss -Htln "sport = :$E_TCP_PORT" | grep -q . && break
		sleep 0.02
	done
}

# e2e_iperf3 SRC ARGS...: one iperf3 client in the sender's namespace, bound
# to SRC, on the sender's CPU, against a fresh e2e_iperf3_server; ARGS are
# iperf3's (-n, -t, -P, ...). Its JSON into $E_TMP/tcp_c.json; timed by
# e2e_span_begin/e2e_span_end.
e2e_iperf3() {
	local src=$1 spid
	shift
	e2e_iperf3_server spid
	e2e_span_begin
	ip netns exec "$E_NS_S" taskset -c "$E_SEND_CPU" iperf3 -c "$E_ADDR_R" -p "$E_TCP_PORT" \
		-B "$src" "$@" --json > "$E_TMP/tcp_c.json" 2>&1
	wait "$spid" 2>/dev/null
	e2e_span_end
}

e2e_tcp() {
	local rep=$1 mtu=0 delay=0 bytes mode=tcp src
	shift
	for v in "$@"; do
		case $v in
		mtu) mtu=1 ;;
		delay) delay=1 ;;
		*) e2e_fail "e2e_tcp: unknown variant $v" ;;
		esac
	done
	src=$E_ADDR_S
	if [ "$delay" = 1 ]; then
		[ "$E_DL_OK" = 1 ] || e2e_fail "e2e_tcp delay: the delay line is not up"
		src=$E_ADDR_SD
	fi
	bytes=$(e2e_bytes "$E_SIZE")
	if [ "$mtu" = 1 ]; then
		mode=tcp-mtu
		ip netns exec "$E_NS_S" ethtool -K "$E_IF_S" tso off gso off > /dev/null ||
			e2e_fail "cannot turn TSO/GSO off"
	fi
	[ "$delay" = 1 ] && mode=$mode-delay
	e2e_iperf3 "$src" -n "$bytes" -l 128K
	if [ "$mtu" = 1 ]; then
		# Back to the set-up's state. "tso off gso off" leaves
		# tx-udp-segmentation alone, so it is not touched here: with
		# E_USO_OFF=0 the RBUDP runs after this copy keep the 10 Gb/s line.
		ip netns exec "$E_NS_S" ethtool -K "$E_IF_S" tso on gso on > /dev/null
	fi
	/usr/bin/python3 - "$E_TMP" "$E_OUT/runs.jsonl" "$E_K" "$rep" "$E_T0" "$E_T1" \
		"$E_STEAL_PCT" "$bytes" "$mode" \
		"$([ "$delay" = 1 ] && echo "$E_DELAY_MS" || echo 0)" <<'PY'
import json, sys
d = sys.argv[1]
def load(n):
    try:
        return json.load(open(d + "/" + n))
    except (OSError, ValueError):
        return None
c, s = load("tcp_c.json"), load("tcp_s.json")
rec = {"k": int(sys.argv[3]), "mode": sys.argv[9], "tag": "tcp", "rate_req_bps": None,
       "rep": int(sys.argv[4]), "t_start_mono": float(sys.argv[5]),
       "t_end_mono": float(sys.argv[6]), "steal_pct": int(sys.argv[7]),
       "file_bytes": int(sys.argv[8]), "one_way_delay_ms": float(sys.argv[10])}
ok = bool(c and "end" in c and c["end"].get("sum_received"))
rec["ok"] = ok
if ok:
    sr, ss = c["end"]["sum_received"], c["end"]["sum_sent"]
    rec["transfer_time_s"] = sr["seconds"]
    rec["bytes_received"] = sr["bytes"]
    rec["goodput_bps"] = sr["bits_per_second"]
    rec["retransmits"] = ss.get("retransmits")
    rec["iperf3_client_end"] = c["end"]
    if s and "end" in s:
        rec["iperf3_server_end"] = s["end"]
    print("k=%d %s rep %d: T %.3f s (%.3f Gb/s), %s retransmits"
          % (rec["k"], rec["mode"], rec["rep"], rec["transfer_time_s"], rec["goodput_bps"] / 1e9,
             rec["retransmits"]), file=sys.stderr)
else:
    rec["error"] = (c or {}).get("error") or "no iperf3 result"
    print("k=%d %s rep %d: FAILED %s" % (rec["k"], rec["mode"], rec["rep"], rec["error"]), file=sys.stderr)
with open(sys.argv[2], "a") as f:
    f.write(json.dumps(rec) + "\n")
PY
}

# ------------------------------------------------------------------ runs --
# A shared machine: other engineers' builds, fuzzers and tests, and the
# hypervisor, take CPU time the experiment assumes it has. The condition of
# the experiment is: on the receiver's CPU exactly k CPU-bound tasks besides
# the receiver, on the sender's CPU nothing CPU-bound but the sender, and
# the vCPUs not stolen. Measured on the test VM (2 CPUs): with
# a foreign compile job on the sender's CPU (#C there 1.3-2.0 on average
# over a run instead of 0.5-1.0: the sender itself) the sender achieved
# 30-75 % of the rate asked; with one on the receiver's CPU it gets a share
# less than 1/(k+1).
E_STEAL_MAX=${E_STEAL_MAX:-10}		# % of the vCPUs' time stolen during a run
E_SEND_CB_MAX=${E_SEND_CB_MAX:-1.2}	# mean #C on the sender's CPU over a run
E_QUIET_WAIT=${E_QUIET_WAIT:-120}	# s to wait for a quiet machine before a run
E_RETRIES=${E_RETRIES:-3}		# repeats of a disturbed run

# e2e_epochs_json: the status poller's records, newest last (Python helper).
_E2E_PY_EPOCHS='
import json, os
def epochs(path, tail=1 << 20):
    """The records in the last @tail bytes of the file (about 250 epochs)."""
    out = []
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        n = f.tell()
        f.seek(max(0, n - tail))
        lines = f.read().split(b"\n")
    if n > tail:
        lines = lines[1:]
    for l in lines:
        try:
            e = json.loads(l)
        except ValueError:
            continue
        if e.get("start_ns") and e.get("end_ns"):
            out.append(e)
    return out
def cb(e, cpu):
    c = [x for x in e.get("cpus") or [] if x["cpu"] == cpu]
    return c[0]["cpu_bound"] if c and c[0]["cpu_bound"] is not None else None
def ceff(e, cpu):
    """The effective competing count (weights, quotas), else #C."""
    c = [x for x in e.get("cpus") or [] if x["cpu"] == cpu]
    if c and c[0].get("cpu_bound_eff") is not None:
        return c[0]["cpu_bound_eff"]
    return cb(e, cpu)
'

# e2e_quiet: wait (at most E_QUIET_WAIT s) for two epochs in a row with no
# foreign CPU-bound work: #C < 0.5 on the sender's CPU and < k + 0.5 on the
# receiver's. Returns 1 if the machine did not quieten (the run goes on and
# is judged by e2e_disturbed).
e2e_quiet() {
	/usr/bin/python3 - "$E_OUT/status.jsonl" "$(e2e_load_limit)" "$E_RECV_CPU" "$E_SEND_CPU" \
		"$E_QUIET_WAIT" <<PY
$_E2E_PY_EPOCHS
import sys, time
path, lim, rc, sc, wait = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
end = time.monotonic() + wait
seen, quiet, noted = None, 0, False
while time.monotonic() < end:
    eps = epochs(path, 65536)
    if eps and eps[-1]["epoch"] != seen:
        e = eps[-1]
        seen = e["epoch"]
        s, r = cb(e, sc), ceff(e, rc)
        if s is not None and r is not None and s < 0.5 and r < lim:
            quiet += 1
            if quiet >= 2:
                sys.exit(0)
        else:
            quiet = 0
            if not noted:
                print("  waiting for a quiet machine (#C %s on cpu%d, effective %s on cpu%d, limit %.2f)"
                      % (s, sc, r, rc, lim), file=sys.stderr)
                noted = True
    time.sleep(0.2)
sys.exit(1)
PY
}

# e2e_disturbed: judge the last run in runs.jsonl against the condition.
# Prints the reason and returns 1 when it did not hold.
e2e_disturbed() {
	/usr/bin/python3 - "$E_OUT/status.jsonl" "$E_OUT/runs.jsonl" "$(e2e_load_limit)" "$E_RECV_CPU" \
		"$E_SEND_CPU" "$E_STEAL_MAX" "$E_SEND_CB_MAX" "$((E_EPOCH_MS * 3))" <<PY
$_E2E_PY_EPOCHS
import sys, time
stf, runf = sys.argv[1], sys.argv[2]
lim, rc, sc = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
smax, scb, wait_ms = float(sys.argv[6]), float(sys.argv[7]), int(sys.argv[8])
run = json.loads(open(runf).read().splitlines()[-1])
t0, t1 = run["t_start_mono"], run["t_end_mono"]
deadline = time.monotonic() + wait_ms / 1000
while True:        # until the poller has the epoch in which the run ended
    eps = epochs(stf)
    if any(e["end_ns"] / 1e9 >= t1 for e in eps) or time.monotonic() > deadline:
        break
    time.sleep(0.1)
eps = [e for e in eps if e["end_ns"] / 1e9 > t0 and e["start_ns"] / 1e9 < t1]
why = []
if run["steal_pct"] > smax:
    why.append("steal %d %%" % run["steal_pct"])
for e in eps:
    c = ceff(e, rc)
    if c is not None and c > lim:
        why.append("effective #C %.2f > %.2f on cpu%d in epoch %d" % (c, lim, rc, e["epoch"]))
        break
s = [cb(e, sc) for e in eps if cb(e, sc) is not None]
if s and sum(s) / len(s) > scb:
    why.append("mean #C %.2f on the sender's cpu%d" % (sum(s) / len(s), sc))
if not eps:
    why.append("no epoch of rxbneckd covers the run")
if why:
    print("; ".join(why))
    sys.exit(1)
PY
}

# e2e_mark_last REASON: record in runs.jsonl that the last run was disturbed.
e2e_mark_last() {
	/usr/bin/python3 - "$E_OUT/runs.jsonl" "$1" <<'PY'
import json, sys
p = sys.argv[1]
lines = open(p).read().splitlines()
r = json.loads(lines[-1])
r["disturbed"] = sys.argv[2]
lines[-1] = json.dumps(r)
open(p, "w").write("\n".join(lines) + "\n")
PY
}

# e2e_repeat_disturbed CMD ARGS...: wait for a quiet machine, run CMD ARGS
# (a run that appends its record to runs.jsonl), and repeat it while
# disturbed (e2e_disturbed), at most E_RETRIES times.
e2e_repeat_disturbed() {
	local try why
	for try in $(seq 0 "$E_RETRIES"); do
		e2e_quiet || e2e_log "  the machine did not quieten within $E_QUIET_WAIT s; running anyway"
		"$@"
		why=$(e2e_disturbed) && return 0
		e2e_mark_last "$why"
		e2e_log "  disturbed ($why)$([ "$try" -lt "$E_RETRIES" ] && echo ", again")"
	done
	return 0
}

# e2e_point MODE RATE REP TAG: one measurement point (MODE fixed/follow/
# follow-nopause: e2e_run; tcp, tcp-mtu, tcp-delay, tcp-mtu-delay: e2e_tcp),
# repeated while disturbed.
e2e_point_once() {
	case $1 in
	tcp) e2e_tcp "$3" ;;
	tcp-mtu) e2e_tcp "$3" mtu ;;
	tcp-delay) e2e_tcp "$3" delay ;;
	tcp-mtu-delay) e2e_tcp "$3" mtu delay ;;
	*) e2e_run "$@" ;;
	esac
}
e2e_point() { e2e_repeat_disturbed e2e_point_once "$@"; }

# The k tasks on the receiver's CPU, and what the daemon makes of them.
. "$E_LIB/lib_load.sh"

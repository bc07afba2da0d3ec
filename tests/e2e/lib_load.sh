# shellcheck shell=bash
# The end-to-end experiment's load on the receiver's CPU: the k tasks put
# there besides the receiver, their kind (E_LOAD), and waiting until
# rxbneckd's count of them (#C, or the effective one) settles. Sourced by
# tests/e2e/lib.sh (which every script sources), not on its own.
#
#   e2e_hogs K           K busy loops pinned to $E_RECV_CPU (0 stops them)
#   e2e_k_begin K [NOTE] the heavy-test lock (fd 9) taken, E_K=K exported,
#                        K busy loops started; e2e_k_end stops them and
#                        lets the lock go; e2e_k_settle waits for #C ~ E_K
#   e2e_wait_cb K        wait until the daemon sees #C ~ K on the receiver CPU
#   e2e_load K           K tasks of kind E_LOAD there instead (0 stops them);
#                        e2e_load_check, e2e_load_expect, e2e_wait_load below

e2e_hogs() {	# e2e_hogs K: exactly K busy loops on the receiver's CPU
	if [ -n "$E_HOGS_PID" ]; then
		kill "$E_HOGS_PID" 2>/dev/null
		wait "$E_HOGS_PID" 2>/dev/null
		E_HOGS_PID=
	fi
	[ "$1" -gt 0 ] || return 0
	stress-ng --quiet --cpu "$1" --cpu-method loop --taskset "$E_RECV_CPU" &
	E_HOGS_PID=$!
}

# e2e_k_begin K [NOTE]: wait for the heavy-test lock (held on fd 9 until
# e2e_k_end), then exactly K busy loops on the receiver's CPU. NOTE follows
# "k=K" in the waiting line as given (" repeat 2", ", 2 readers").
e2e_k_begin() {
	export E_K=$1
	exec 9> "$E_LOCK"
	e2e_log "k=$E_K${2:-}: waiting for the heavy-test lock"
	flock 9
	e2e_hogs "$E_K"
}

e2e_k_end() {
	e2e_hogs 0
	flock -u 9
}

# e2e_k_settle: e2e_wait_cb for E_K; when the CPU does not settle, says so
# and goes on (every run is then judged on its own, e2e_point).
e2e_k_settle() {
	e2e_wait_cb "$E_K" > /dev/null ||
		e2e_log "CPU $E_RECV_CPU did not settle at #C=$E_K; runs are checked one by one"
}

# #C on the receiver's CPU as the daemon's epoch record says.
e2e_cpu_bound() {
	e2e_ctl status --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [x for x in d["cpus"] if x["cpu"] == int(sys.argv[1])]
print(c[0]["cpu_bound"] if c and c[0]["cpu_bound"] is not None else -1)' "$E_RECV_CPU"
}

# e2e_wait_cb K: up to 15 s for 3 epochs in a row with |#C - K| < 0.3.
# Prints the last #C; returns 1 if the CPU never settled (the run goes on,
# the analysis sees #C in the records).
e2e_wait_cb() {
	local ok=0 c end=$((SECONDS + 15))
	while [ $SECONDS -lt $end ]; do
		c=$(${E_WAIT_READER:-e2e_cpu_bound})
		if /usr/bin/python3 -c "import sys; sys.exit(0 if abs($c - $1) < 0.3 else 1)"; then
			ok=$((ok + 1))
			[ $ok -ge 3 ] && { echo "$c"; return 0; }
		else
			ok=0
		fi
		sleep "$(/usr/bin/python3 -c "print($E_EPOCH_MS / 1000)")"
	done
	echo "$c"
	return 1
}

# ------------------------------------------------------------- loads --
# The kind of the k tasks put on the receiver's CPU (docs/e2e.md §1):
#   busy      k busy loops (stress-ng --cpu-method loop), the default
#   duty:P    k loops busy P % of the wall-clock time, asleep the rest
#             (stress-ng --cpu-load P; periods of --cpu-load-slice, its default)
#   nice:N    k busy loops at nice N (CFS/EEVDF weight w(N) against 1024)
#   quota:P   k busy loops in one cgroup held to P % of one CPU (cgroup v2
#             cpu.max, or v1 cpu.cfs_quota_us where the cpu controller is
#             in v1), made by the harness and removed by its exit trap
#   io        k fio jobs reading a 64 MiB file at random with O_DIRECT and
#             the sync engine (every task blocks on the disk each 4 KiB)
#             in the work directory (on disk, not tmpfs)
E_LOAD=${E_LOAD:-busy}
E_LOAD_PID=
E_LOAD_CG=

# e2e_load_check: refuse an unknown E_LOAD, and a kind this host cannot
# run (exit 77 with the reason).
e2e_load_check() {
	case $E_LOAD in
	busy) ;;
	duty:[0-9]*) [ "${E_LOAD#duty:}" -ge 1 ] && [ "${E_LOAD#duty:}" -le 99 ] ||
		e2e_fail "E_LOAD=$E_LOAD: the duty is 1..99 %"
		# Two or more stretch each other's busy phases (runnable 0.65 each
		# for two at 50 % on one CPU): their share has no closed form here.
		for _k in ${KS:-1}; do
			[ "$_k" -le 1 ] || e2e_fail "E_LOAD=$E_LOAD: k = 0 or 1 only (k = $_k)"
		done ;;
	nice:[0-9]*|nice:-[0-9]*) [ "${E_LOAD#nice:}" -ge -20 ] && [ "${E_LOAD#nice:}" -le 19 ] ||
		e2e_fail "E_LOAD=$E_LOAD: nice is -20..19" ;;
	quota:[0-9]*) [ "${E_LOAD#quota:}" -ge 1 ] && [ "${E_LOAD#quota:}" -le 100 ] ||
		e2e_fail "E_LOAD=$E_LOAD: the quota is 1..100 % of one CPU"
		[ -n "$(e2e_cgroup_kind)" ] || e2e_skip "E_LOAD=$E_LOAD: no cgroup with the cpu controller" ;;
	io) command -v fio > /dev/null || e2e_skip "E_LOAD=io: fio not installed" ;;
	*) e2e_fail "E_LOAD=$E_LOAD: one of busy, duty:P, nice:N, quota:P, io" ;;
	esac
}

# Where a cgroup with a CPU quota can be made: "v1" (/sys/fs/cgroup/cpu),
# "v2" (/sys/fs/cgroup with the cpu controller), or nothing.
e2e_cgroup_kind() {
	if [ -f /sys/fs/cgroup/cpu/cpu.cfs_period_us ]; then
		echo v1
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		echo v2
	fi
}

# e2e_load_cgroup P: make the quota cgroup ($E_LOAD_CG), P % of one CPU.
e2e_load_cgroup() {
	local per=100000
	case $(e2e_cgroup_kind) in
	v1)
		E_LOAD_CG=/sys/fs/cgroup/cpu/rxbe2e-$$
		mkdir -p "$E_LOAD_CG" && echo "$per" > "$E_LOAD_CG/cpu.cfs_period_us" &&
			echo $(($1 * per / 100)) > "$E_LOAD_CG/cpu.cfs_quota_us" ;;
	v2)
		grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
			echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
		E_LOAD_CG=/sys/fs/cgroup/rxbe2e-$$
		mkdir -p "$E_LOAD_CG" && echo "$(($1 * per / 100)) $per" > "$E_LOAD_CG/cpu.max" ;;
	*) false ;;
	esac || e2e_fail "cannot make the quota cgroup $E_LOAD_CG"
}

# e2e_load_stop: the load's tasks gone, its cgroup removed (also from the
# exit trap).
e2e_load_stop() {
	if [ -n "$E_LOAD_PID" ]; then
		kill "$E_LOAD_PID" 2>/dev/null
		wait "$E_LOAD_PID" 2>/dev/null
		E_LOAD_PID=
	fi
	if [ -n "$E_LOAD_CG" ] && [ -d "$E_LOAD_CG" ]; then
		# stress-ng's workers leave with their parent; wait for them.
		for _ in $(seq 50); do
			[ -s "$E_LOAD_CG/cgroup.procs" ] || break
			sleep 0.1
		done
		rmdir "$E_LOAD_CG" 2>/dev/null || e2e_log "could not remove $E_LOAD_CG (tasks left: $(cat "$E_LOAD_CG/cgroup.procs" 2>/dev/null | tr '\n' ' '))"
	fi
	E_LOAD_CG=
}

# e2e_load K: exactly K tasks of kind E_LOAD on the receiver's CPU (0 stops them).
e2e_load() {
	local cpu=$E_RECV_CPU
	e2e_load_stop
	[ "$1" -gt 0 ] || return 0
	case $E_LOAD in
	busy) stress-ng --quiet --cpu "$1" --cpu-method loop --taskset "$cpu" & ;;
	duty:*) stress-ng --quiet --cpu "$1" --cpu-method loop --cpu-load "${E_LOAD#duty:}" \
		--taskset "$cpu" & ;;
	nice:*) nice -n "${E_LOAD#nice:}" stress-ng --quiet --cpu "$1" --cpu-method loop \
		--taskset "$cpu" & ;;
	quota:*)
		e2e_load_cgroup "${E_LOAD#quota:}"
		# The shell joins the cgroup, then becomes stress-ng: its
		# workers are born inside.
		sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$E_LOAD_CG" \
			stress-ng --quiet --cpu "$1" --cpu-method loop --taskset "$cpu" & ;;
	io)
		taskset -c "$cpu" fio --name=rxbe2e-io --filename="$E_TMP/io.dat" --size=64M \
			--direct=1 --ioengine=sync --rw=randread --bs=4k --numjobs="$1" \
			--time_based --runtime=86400 --output=/dev/null & ;;
	esac
	E_LOAD_PID=$!
}

# e2e_load_expect K: the effective competing count (cpus[].cpu_bound_eff,
# daemon/collect/cpushare.h) that K tasks of kind E_LOAD should give a
# saturated nice-0 receiver, from the closed forms (tests/e2e/loads.py).
e2e_load_expect() {
	/usr/bin/python3 "$E_SRC/tests/e2e/loads.py" expect "$E_LOAD" "$1"
}

# e2e_load_limit: the most effective #C on the receiver's CPU that is still
# the experiment's own load: e2e_load_expect $E_K + 0.5. Foreign work
# shows as what it takes of the CPU: a task at nice 0 adds 1, one at nice
# 19 (a build run with nice -n 19) 0.015, and is no disturbance.
e2e_load_limit() {
	/usr/bin/python3 -c "print('%.4f' % ($(e2e_load_expect "$E_K") + 0.5))"
}

# The effective count on the receiver's CPU (-1 when not measured).
e2e_cpu_bound_eff() {
	e2e_ctl status --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
c = [x for x in (d.get("measurement") or {}).get("cpus") or [] if x["cpu"] == int(sys.argv[1])]
v = c[0].get("cpu_bound_eff") if c else None
print(v if v is not None else -1)' "$E_RECV_CPU"
}

# e2e_wait_load K: e2e_wait_cb on the effective count against
# e2e_load_expect K (up to 15 s for 3 epochs in a row within 0.3 of it).
e2e_wait_load() {
	E_WAIT_READER=e2e_cpu_bound_eff e2e_wait_cb "$(e2e_load_expect "$1")"
}

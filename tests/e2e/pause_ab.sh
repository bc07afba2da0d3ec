#!/usr/bin/env bash
# tests/e2e/pause_ab.sh: does `--follow` (RBUDP+, obeys PAUSE) lose like
# `--follow --no-pause` where rxbneckd publishes no PAUSE? With K busy loops
# and I fio readers (O_DIRECT 4 KiB random reads, 2000 a second each: tasks
# that sleep most of the time and block in io_schedule, the model's
# I/O-bound tasks) on the receiver's CPU, alternate
# N `--follow` and N `--follow --no-pause` transfers (the order of each pair
# drawn at random), then judge them by the rule below (docs/e2e.md §5.6).
#
#   sudo tests/e2e/pause_ab.sh [-b BUILD] [-k K] [-i I] [-n N] -o OUTDIR
#
# Defaults: build, k = 1, I = 2, N = 12, 100 ms one-way delay, 200 MB
# transfers (lib.sh's settings). The set-up, the quiet-machine checks and
# the clean-up are run.sh's (tests/e2e/lib.sh); runs.jsonl in OUTDIR has
# every transfer, verdict.json the judgement.
#
# The rule (fixed before the runs):
#  1. No transfer of either mode receives a RATE flagged BETWEEN_PAUSES
#     before it has received a PAUSE schedule (counted over every RATE of
#     every judged transfer; one is a failure).
#  2. Only if no judged transfer received a PAUSE frame (the load is one
#     where the receiver gets no PAUSE): the first-round loss fractions of
#     the two modes do not differ - two-sided Mann-Whitney U, p from 20 000
#     random relabellings (fixed seed), and Fisher's exact test on the
#     number of transfers that lost anything in their first round; both
#     p >= 0.05. With PAUSE frames the load does not qualify and claim 2 is
#     not judged.
#  Judged: the transfers tagged main that finished (send.ok) and were not
#  disturbed; at least 10 per mode, else no verdict.
# Exit 0 pass, 1 failure or fail verdict, 2 usage, 3 no verdict, 77 cannot run.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
N=12 K=1 IOJOBS=2
. "$SRC/tests/e2e/lib.sh"
e2e_args "b:E_BUILD i:IOJOBS k:K n:N o:E_OUT" "$@"
if [ -z "$E_OUT" ]; then
	e2e_usage
fi
e2e_out_init pause_ab
E_BUILD=$(cd "$E_BUILD" && pwd) || exit 1
export E_BUILD E_OUT
command -v fio > /dev/null || e2e_skip "fio not installed"

IO_PID=
io_stop() {
	[ -n "$IO_PID" ] || return 0
	kill "$IO_PID" 2>/dev/null
	wait "$IO_PID" 2>/dev/null
	IO_PID=
}

e2e_setup_pinned
trap 'io_stop; e2e_cleanup' EXIT
# The readers' file, laid out before the lock is taken (fio writes it once).
fio --name=layout --filename="$E_TMP/io.bin" --size=128M --rw=write --bs=1M \
	--direct=1 --output=/dev/null || e2e_fail "fio: cannot lay out $E_TMP/io.bin"
e2e_daemon_start
e2e_k_begin "$K" ", $IOJOBS I/O-bound readers"
if [ "$IOJOBS" -gt 0 ]; then
	fio --name=iobound --filename="$E_TMP/io.bin" --size=128M --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --rate_iops=2000 --numjobs="$IOJOBS" \
		--cpus_allowed="$E_RECV_CPU" \
		--time_based --runtime=3600 --output=/dev/null &
	IO_PID=$!
fi
e2e_k_settle
for w in 1 2 3; do e2e_run follow - "$w" warmup; done
for rep in $(seq "$N"); do
	if [ $((RANDOM % 2)) -eq 0 ]; then
		e2e_point follow - "$rep" main
		e2e_point follow-nopause - "$rep" main
	else
		e2e_point follow-nopause - "$rep" main
		e2e_point follow - "$rep" main
	fi
done
io_stop
e2e_k_end
e2e_daemon_stop

/usr/bin/python3 "$SRC/tests/e2e/pause_ab.py" "$E_OUT/runs.jsonl" "$E_OUT/verdict.json"

#!/usr/bin/env bash
# tests/e2e/pool.py, the pooled sweep of docs/e2e.md §4, on
# synthetic results.json files whose answers are known in closed form:
#
# 1. Two reference runs, k = 0 and 1. At k = 0 rate A (1 Gb/s) takes
#    1.0 s or 1.3 s with equal weight (pooled mean 1.15, the best) and
#    rate B (2 Gb/s) always 1.2 s, losing 10 % in its first round. The
#    judged run's --follow transfers take 1.2 and 1.3 s (mean 1.25): 1.25
#    / 1.15 = 1.087 (claim 1 holds), 1.25 / 1.2 = 1.042 against the top
#    (claim 2 fails), chosen 1.1 Gb/s / 1 Gb/s (claim 3 holds), where
#    the pooled curve is 1.15 + 0.1 x (1.2 - 1.15), 1.0043 x best. At k = 1
#    every run at a rate takes one time: the best T's bootstrap interval
#    is that time exactly, P(best) is 1 for its rate.
# 2. The false-failure rate of the per-run verdict for a chooser that
#    always picks the best rate, with one run per rate and one transfer
#    (--sweep-reps 1 --follow-reps 1), at k = 0: the sweep's lowest
#    mean is 1.0 (A drew 1.0) or 1.2 (A drew 1.3, B is 1.2), each with
#    probability 1/2; the transfer at A fails 1.10 x that only when the
#    lowest is 1.0 and it drew 1.3: 1/4. Bootstrapped 20000 times: within
#    0.015 (5 standard errors). At k = 1: 0. Claim 2 against the top B
#    (1.2 s, 10 % lost): 0.75 x 1.2 = 0.9 is below both of A's times,
#    so it always fails (best / top 1.15 / 1.2). At k = 2 A takes 0.8 or
#    1.0 s and the top 1.2 s (20 % lost): claim 1 fails when the sweep
#    drew 0.8 and the transfer 1.0 (1/4), claim 2 when the transfer drew
#    1.0 > 0.9 (1/2); best / top 0.9 / 1.2.
# 3. Disturbed, failed and warm-up runs are not pooled.
# 4. A run from another testbed (other rcvbuf) is refused, naming the
#    directory and the key; a bad --boot exits 2; nothing is written.
# 5. --ref-from PARENT (what run.sh does with tests/e2e/results): it pools
#    r1 and r2 (the judged run and the other testbed's run left out, the
#    latter counted), so its answer is the one of 1. exactly; with no run
#    of the judged testbed under PARENT it exits 1, without --judge 2.
# Exit 0 pass, 77 skip, 1 fail.
set -u
POOL=${RXB_SRC:-.}/tests/e2e/pool.py
command -v python3 > /dev/null || { echo "e2e_pool: SKIP, no python3" >&2; exit 77; }

work=$(mktemp -d /tmp/rxbt-pool.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
meta = {"kernel": "k", "cpus": 2, "one_way_delay_ms": 100.0, "rcvbuf": "4Mi",
        "line_rate_bps": 2e9, "file_size": "200M", "uso_off": True, "rps": False,
        "epoch_ms": 250, "netdev_max_backlog": "1000", "recv_args": "",
        "recv_cpu": 1, "send_cpu": 0, "seed": 1, "git_commit": "x"}
def fixed(k, rate, t, loss=0.0, **kw):
    r = {"k": k, "mode": "fixed", "tag": "main", "rate_req_bps": rate, "ok": True,
         "disturbed": False, "transfer_time_s": t, "loss_first_round": loss}
    r.update(kw)
    return r
def follow(k, t, chosen, mode="follow"):
    return {"k": k, "mode": mode, "tag": "main", "ok": True, "disturbed": False,
            "transfer_time_s": t, "loss_first_round": 0.0, "rate_first_bps": chosen}
def write(name, runs, **over):
    d = os.path.join(work, name)
    os.makedirs(d)
    m = dict(meta, **over)
    json.dump({"meta": m, "runs": runs}, open(os.path.join(d, "results.json"), "w"))
write("r1", [fixed(0, 1e9, 1.0), fixed(0, 1e9, 1.3), fixed(0, 2e9, 1.2, 0.1),
             fixed(1, 1e9, 2.0), fixed(1, 2e9, 1.5),
             # not pooled: disturbed, failed, a warm-up
             fixed(0, 2e9, 0.1, disturbed=True), fixed(0, 2e9, 0.1, ok=False),
             fixed(0, 2e9, 0.1, tag="warmup")])
write("r2", [fixed(0, 1e9, 1.0), fixed(0, 1e9, 1.3), fixed(0, 2e9, 1.2, 0.1),
             fixed(1, 1e9, 2.0), fixed(1, 2e9, 1.5),
             fixed(2, 1e9, 0.8), fixed(2, 1e9, 1.0), fixed(2, 2e9, 1.2, 0.2)])
write("j", [follow(0, 1.2, 1.1e9), follow(0, 1.3, 1.1e9),
            follow(1, 1.5, 2e9), follow(1, 1.5, 2e9),
            follow(1, 9.9, 2e9, mode="tcp")])
write("other", [fixed(0, 1e9, 1.0)], rcvbuf="32Mi")
PY

fail=0
bad() { echo "e2e_pool: FAIL: $*" >&2; fail=1; }

if ! python3 "$POOL" "$work/r1" "$work/r2" --judge "$work/j" --boot 20000 \
	--sweep-reps 1 --follow-reps 1 --json "$work/out.json" > "$work/out.md" 2> "$work/err"; then
	bad "pool.py exited $? on good input: $(cat "$work/err")"
fi
python3 - "$work/out.json" "$work/j" <<'PY' || fail=1
import json, sys
res = json.load(open(sys.argv[1]))
jd = sys.argv[2]
bad = []
def near(what, got, want, tol):
    if got is None or abs(got - want) > tol:
        bad.append("%s: %r, expected %r (within %g)" % (what, got, want, tol))
def same(what, got, want):
    if got != want:
        bad.append("%s: %r, expected %r" % (what, got, want))
r0, r1 = res["reference"]["0"], res["reference"]["1"]
same("k=0 best rate", r0["best"]["rate_bps"], 1e9)
near("k=0 best T", r0["best"]["time_s"]["mean"], 1.15, 1e-12)
same("k=0 runs at A (disturbed/failed/warm-up left out)", r0["best"]["time_s"]["n"], 4)
same("k=0 runs at B", r0["top"]["time_s"]["n"], 2)
near("k=0 top loss", r0["top"]["loss_first_round"], 0.1, 1e-12)
near("k=0 false-failure rate", r0["oracle_claim1_fail"], 0.25, 0.015)
same("k=1 best rate", r1["best"]["rate_bps"], 2e9)
near("k=1 best T interval lo", r1["best_time_ci99"][0], 1.5, 1e-12)
near("k=1 best T interval hi", r1["best_time_ci99"][1], 1.5, 1e-12)
near("k=1 P(best) of 2 Gb/s", r1["points"][1]["p_best"], 1.0, 0)
near("k=1 false-failure rate", r1["oracle_claim1_fail"], 0.0, 0)
near("k=0 best / top", r0["best_over_top"], 1.15 / 1.2, 1e-12)
near("k=0 claim 2 false-failure rate", r0["oracle_claim2_fail"], 1.0, 0)
same("k=1 claim 2 false-failure rate (top lossless: n/a)", r1["oracle_claim2_fail"], None)
r2 = res["reference"]["2"]
near("k=2 claim 1 false-failure rate", r2["oracle_claim1_fail"], 0.25, 0.015)
near("k=2 claim 2 false-failure rate", r2["oracle_claim2_fail"], 0.5, 0.015)
near("k=2 best / top", r2["best_over_top"], 0.9 / 1.2, 1e-12)
j0 = res["per_dir"][jd]["per_k"]["0"]["follow"]
near("k=0 follow / best", j0["follow_over_best"], 1.25 / 1.15, 1e-12)
same("k=0 claim 1", j0["claim1"], True)
near("k=0 follow / top", j0["follow_over_top"], 1.25 / 1.2, 1e-12)
same("k=0 claim 2", j0["claim2"], False)
near("k=0 chosen / best", j0["chosen_over_best"], 1.1, 1e-12)
same("k=0 claim 3", j0["claim3"], True)
near("k=0 pooled T at 1.1 Gb/s / best", j0["curve_t_at_chosen_over_best"],
     (1.15 + 0.1 * (1.2 - 1.15)) / 1.15, 1e-12)
j1 = res["per_dir"][jd]["per_k"]["1"]["follow"]
same("k=1 transfers judged (tcp left out)", j1["time_s"]["n"], 2)
near("k=1 follow / best", j1["follow_over_best"], 1.0, 1e-12)
same("k=1 claim 2 (top lossless: n/a)", "claim2" in j1, False)
same("pooled = the one judged run", res["pooled"]["0"]["follow"]["follow_over_best"],
     j0["follow_over_best"])
for b in bad:
    print("e2e_pool: FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
grep -q 'claim 1 fails for the best rate itself' "$work/out.md" || bad "no false-failure table"

# Another testbed: refused, named, nothing written.
python3 "$POOL" "$work/r1" "$work/other" --json "$work/no.json" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || bad "mismatched testbed exited $rc, expected 1"
grep -q "other: testbed differs from .*r1 in rcvbuf" "$work/err" || bad "mismatch not named: $(cat "$work/err")"
[ ! -e "$work/no.json" ] || bad "mismatched testbed wrote its JSON"
python3 "$POOL" "$work/r1" --boot 5 > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 2 ] || bad "--boot 5 exited $rc, expected 2"
grep -q -- "--boot 5" "$work/err" || bad "--boot not named: $(cat "$work/err")"
python3 "$POOL" "$work/nothere" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || bad "missing directory exited $rc, expected 1"
grep -q "nothere: cannot read results.json" "$work/err" || bad "missing directory not named"

# --ref-from: the same reference found by testbed.
mkdir "$work/notes"	# no results.json: not a run, passed over silently
if ! python3 "$POOL" --ref-from "$work" --judge "$work/j" --boot 20000 \
	--sweep-reps 1 --follow-reps 1 --json "$work/from.json" > /dev/null 2> "$work/err"; then
	bad "--ref-from exited $? on good input: $(cat "$work/err")"
fi
python3 - "$work/out.json" "$work/from.json" "$work" <<'PY' || fail=1
import json, os, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
names = [os.path.basename(d) for d in b["refdirs"]]
bad = []
if names != ["r1", "r2"]:
    bad.append("--ref-from pooled %s, expected r1 and r2" % names)
if b["other_testbeds_passed_over"] != 1:
    bad.append("--ref-from passed over %r other testbeds, expected 1"
               % b["other_testbeds_passed_over"])
if a["reference"] != b["reference"] or a["pooled"] != b["pooled"]:
    bad.append("--ref-from gave another reference or verdict than r1 r2 named")
for x in bad:
    print("e2e_pool: FAIL: " + x, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
python3 "$POOL" --ref-from "$work" --judge "$work/other" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 1 ] || bad "--ref-from with no run of the testbed exited $rc, expected 1"
grep -q "no kept run of this testbed (3 of other testbeds)" "$work/err" \
	|| bad "--ref-from with no run of the testbed: $(cat "$work/err")"
python3 "$POOL" --ref-from "$work" > /dev/null 2> "$work/err"
rc=$?
[ $rc -eq 2 ] || bad "--ref-from without --judge exited $rc, expected 2"

[ $fail -eq 0 ] && echo "e2e_pool: pass"
exit $fail

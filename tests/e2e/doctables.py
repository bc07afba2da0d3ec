#!/usr/bin/python3
"""The tables docs/e2e.md quotes, made again from the runs kept in
tests/e2e/results/, and compared with the document.

    doctables.py [--check] [--doc FILE] [--results DIR]
    doctables.py --write [--plot FILE]

The runs tests/e2e/results/ keeps are listed below, each with what it is
kept for. A table in the document sits between two lines

    <!-- table NAME: tests/e2e/doctables.py -->
    ...
    <!-- end table -->

and NAME says which one it is:

  verdict-*  pool.py's pooled verdict (its last table): the --follow
           transfers of a daemon configuration's runs judged against the
           fixed-rate sweeps of a reference pooled, with pool.py's defaults
           (2000 bootstrap resamples, seed 1, one-run sweeps of 3 repeats
           and 3 --follow transfers); VERDICTS lists them:
             verdict-newkernel      loss = queue, REFERENCE's own
             verdict-defaults       the daemon at its defaults (DEFAULTS)
                                    against SAMEDAY
             verdict-defaults-sweeps  SAMEDAY's own, at the defaults
             verdict-floor(-sweeps)  FLOOR_FOLLOW (FLOOR_SWEEPS' own) against
                                    FLOOR_SWEEPS
             verdict-off(-sweeps)   UNC_OFF (OFF_SWEEPS' own) against OFF_SWEEPS
             verdict-off-measured   UNC_MEASURED against OFF_SWEEPS
             verdict-confirm        CONFIRM's own: each --follow transfer
                                    interleaved with its run's sweep
             verdict-confirm2       CONFIRM2's own, as CONFIRM's
             verdict-confirm3       CONFIRM3's own, as CONFIRM's
             verdict-confirm4       CONFIRM4's own, as CONFIRM's
             verdict-confirm5       CONFIRM5's own, as CONFIRM's
             verdict-confirm6       CONFIRM6's own, as CONFIRM's
             verdict-confirm7       CONFIRM7's own, as CONFIRM's
             verdict-confirm8       CONFIRM8's own, as CONFIRM's
             verdict-confirm9       CONFIRM9's own, as CONFIRM's
             verdict-slack          SLACK's own, as CONFIRM's (time_slack)
             verdict-probes1        PROBES1's own (net_probe_every = 1)
             verdict-bands          BANDS's own (the bands that stand)
             verdict-estimated      ESTIMATED's own (bands fed by the estimate)
             verdict-follow-only    FOLLOW_ONLY (no sweep) against
                                    FOLLOW_ONLY_SWEEPS
             verdict-slack2         SLACK2's own (time_slack 0.02 again)
             verdict-follow-only-slack  FOLLOW_ONLY_SLACK against
                                    FOLLOW_ONLY_SWEEPS
             verdict-rps            RPS's own, as CONFIRM's (E_RPS=1)
             verdict-strata-k1      STRATA_K1's own, unsplit
             verdict-qfloor-old/new QFLOOR_OLD's and QFLOOR_NEW's against
                                    both arms' sweeps
  pause    the RBUDP+ against RBUDP tables of PAUSE's table.md (claim 4)
  tcp      the TCP-over-the-path table of MAKE_E2E's table.md
  unc-ab   UNC_MEASURED against UNC_OFF: per k the --follow transfers'
           mean T, chosen rate and lossy count per arm, and the ratio
  fine-k1  FINE_K1's sweep (k = 1, 0.25 Gb/s steps) and its --follow
  loads-pooled  pool.py's verdict per load of LOADS_POOLED, a row each;
           loads-pooled-amd1 and -amd2 the same of LOADS_POOLED_AMD1 and 2
  strata-* the transfers of STRATA_K1 (strata-k1) and of CONFIRM and
           OFF_SWEEPS (strata-kept) at k = 1 split at the median of the
           saturated drain the daemon had at each one's start: per half the
           fixed rates' mean T, the best rate, and its --follow transfers
  rate-rule  per set of five sweeps at the defaults (RATE_RULE_SETS), judged
           by their own --follow: per k the chosen rate against the best,
           and how often a chooser that always asks for the pooled best
           rate would land outside +-10 % of the best of another five
           sweeps (pool.py's bootstrap), and outside it at some k;
           rate-rule-rps the same of RPS
  loads    one row per run of the LOADS lists: the load, the daemon's
           plain and effective count against the expected one, the run's
           best fixed rate, claims 3 and 1 judged by that run's own sweep,
           the capacity against the measured drain, and the daemon's own
           record of its predictions against the outcomes

--check (the default) exits 1, printing a diff, when a table in the
document is not what the kept runs give; when a kept run's table.md is not
what analyze.py makes of its results.json; or when tests/e2e/results/
holds a run not listed here or lacks one that is (or cannot read one).
Exit 0 when all agree, 2 on usage or an unreadable document.

--write puts the tables made from the kept runs into the document and
draws the figure (--plot, default docs/e2e.png) with pool.py: the sweeps
of SAMEDAY and the --follow transfers of the daemon at its defaults
(DEFAULTS). It needs matplotlib (Debian's
python3-matplotlib, for /usr/bin/python3).
"""
import argparse
import difflib
import json
import os
import random
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the results
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import analyze  # noqa: E402
import loads  # noqa: E402
import pool  # noqa: E402

SRC = os.path.normpath(os.path.join(HERE, "..", ".."))


# Runs are named by their testbed and the seed of their order (run.sh -S).
# The 10 Gb/s line, 100 ms one way, an 8 MiB socket buffer, k = 0-3 (kernel
# 6.18.44-fc-v857): five fixed-rate sweeps at the daemon's defaults then
# (loss = queue, loss_episodes = measured), 3
# transfers per rate and k each, pooled into the reference curve; each run
# also has 5 --follow and 5 --follow --no-pause transfers per k.
REFERENCE = ["line10g-s%d" % s for s in range(201, 206)]
# The same sweep again on a later day, when the sender delivered less of
# the asked rate (a median 0.90-0.93 against 0.92-0.96): five runs with the
# daemon at its defaults (loss = service, loss_episodes = windows, the
# windows' slots by their measured mean and spread), whose own --follow
# transfers are judged too.
SAMEDAY = ["line10g-s%d" % s for s in range(243, 248)]
# The daemon at its defaults, the same day: six runs of 5 + 5 --follow
# transfers per k at k = 1-3 and one fixed-rate transfer at 10 Gb/s, no
# sweep.
DEFAULTS = ["line10g-s%d" % s for s in range(237, 243)]
# The daemon with the saturated drain's floor and the measured spread
# ([model] drain_floor = yes, rate_uncertainty = measured): five sweeps
# and six runs of --follow transfers as above, on a later day.
FLOOR_SWEEPS = ["line10g-s%d" % s for s in range(320, 325)]
FLOOR_FOLLOW = ["line10g-s%d" % s for s in range(325, 331)]
# [model] rate_uncertainty measured against off, on a later day: eight runs
# as FLOOR_FOLLOW's, alternating, and five sweeps at k = 1-3 with off, the
# new default (their own --follow transfers too).
UNC_MEASURED = ["line10g-s%d" % s for s in (345, 347, 349, 351)]
UNC_OFF = ["line10g-s%d" % s for s in (346, 348, 350, 352)]
OFF_SWEEPS = ["line10g-s%d" % s for s in range(358, 363)]
# The same day, k = 1 only: 6-7 Gb/s in steps of 0.25, 12 transfers per
# rate and 12 + 12 --follow (with rate_uncertainty = measured).
FINE_K1 = "line10g-s340"
# Check 2 again at the defaults of OFF_SWEEPS, four hours later: five sweeps
# at k = 1-3 judged by their own --follow transfers, which run.sh
# interleaves with the fixed-rate passes (the host's state shared).
CONFIRM = ["line10g-s%d" % s for s in range(370, 375)]
# A second host (an Intel Xeon VM, kernel build 6.18.44-fc-v1045), the
# same defaults: twelve sweeps at k = 1 only (rates 5.3-10
# Gb/s with 6.5 and 7.5, `-S 400` to `411`), split by the saturated drain
# the daemon had learned at each transfer's start (table strata-k1; the
# same split of CONFIRM and OFF_SWEEPS is table strata-kept); then five
# sweeps as CONFIRM's (`-S 420` to `424`), judged by their own --follow.
STRATA_K1 = ["line10g-s%d" % s for s in range(400, 412)]
CONFIRM2 = ["line10g-s%d" % s for s in range(420, 425)]
# Back on the first host (AMD EPYC, fc-v857) seven hours later, the
# defaults of CONFIRM2: five sweeps as CONFIRM's (`-S 520` to `524`),
# judged by their own --follow.
CONFIRM3 = ["line10g-s%d" % s for s in range(520, 525)]
# Three hours later on that host, the same: `-S 600` to `604`.
CONFIRM4 = ["line10g-s%d" % s for s in range(600, 605)]
# The next day on that host, the same: `-S 610` to `614`.
CONFIRM5 = ["line10g-s%d" % s for s in range(610, 615)]
# Five hours later on that host, the same: `-S 630` to `634`.
CONFIRM6 = ["line10g-s%d" % s for s in range(630, 635)]
# On the second host (Intel Xeon, fc-v1045) four days later, the same
# build's behaviour: `-S 640` to `644`.
CONFIRM7 = ["line10g-s%d" % s for s in range(640, 645)]
# The same host two days later, the windows kept by rate
# ([model] windows_by_rate, the default since): `-S 670` to `674`.
CONFIRM8 = ["line10g-s%d" % s for s in range(670, 675)]
# Five hours later on that host, the daemon as it is since (a piece's stage
# B the flow's with the band's windows; the bands made once an epoch):
# `-S 680` to `684`.
CONFIRM9 = ["line10g-s%d" % s for s in range(680, 685)]
# That host later the same day, off the defaults, each judged by its own
# sweeps: [model] time_slack = 0.02 (`-S 690` to `694`); the per-packet
# probes in every epoch ([measure] net_probe_every = 1, `-S 700` to `704`);
# and that with the windows by rate made to stand in a sweep (`-S 710` to
# `714`).
SLACK = ["line10g-s%d" % s for s in range(690, 695)]
PROBES1 = ["line10g-s%d" % s for s in range(700, 705)]
BANDS = ["line10g-s%d" % s for s in range(710, 715)]
# The same host and day, back at the defaults, with the bands fed between
# the sampled epochs from the estimated arrivals: `-S 730` to `734`.
ESTIMATED = ["line10g-s%d" % s for s in range(730, 735)]
# Senders that only follow: three runs of --follow transfers alone (no
# sweep, no warm-up; `-S 790`, `792`, `793`), judged against five
# sweep-only runs of that host and day (`-S 761`, `763`, `765`, `771`, `791`).
FOLLOW_ONLY = ["line10g-s%d" % s for s in (790, 792, 793)]
FOLLOW_ONLY_SWEEPS = ["line10g-s%d" % s for s in (761, 763, 765, 771, 791)]
# The time slack judged again, the same host and day ([model] time_slack =
# 0.02, the default since): five sweeps with their --follow (`-S 830` to
# `834`) and three runs of senders that only follow (`-S 820`, `822`,
# `824`) against FOLLOW_ONLY_SWEEPS.
SLACK2 = ["line10g-s%d" % s for s in range(830, 835)]
FOLLOW_ONLY_SLACK = ["line10g-s%d" % s for s in (820, 822, 824)]
# The twelve sets of five sweeps at the defaults of their day judged by
# their own --follow (check 2 of verdict-off-sweeps, verdict-confirm to
# -confirm9, verdict-estimated and verdict-slack2): how well the +-10 % rule
# can tell a rate chooser's quality (table rate-rule).
RATE_RULE_SETS = [OFF_SWEEPS, CONFIRM, CONFIRM2, CONFIRM3, CONFIRM4, CONFIRM5,
                  CONFIRM6, CONFIRM7, CONFIRM8, CONFIRM9, ESTIMATED, SLACK2]
# The receive softirq on the receiver's CPU (E_RPS=1) at the defaults, the
# rates 0.75-4 Gb/s: five sweeps `-S 620` to `624` judged by their own
# --follow (table verdict-rps, and rate-rule-rps as rate-rule).
RPS = ["rps10g-s%d" % s for s in range(620, 625)]
# The saturated drain's floor under a quota's phases: quota:40 x 1 as in
# LOADS_POOLED, eight runs alternating the build without it (QFLOOR_OLD)
# and with it (QFLOOR_NEW), `-S 450` to `457`, each arm judged against
# the eight runs' sweeps pooled.
QFLOOR_OLD = ["loads-quota40-k1-s%d" % s for s in (450, 452, 454, 456)]
QFLOOR_NEW = ["loads-quota40-k1-s%d" % s for s in (451, 453, 455, 457)]
# The verdict tables: name -> (reference runs, judged runs). One per daemon
# configuration judged against a reference of the same day.
VERDICTS = {
    "verdict-newkernel": (REFERENCE, REFERENCE),
    "verdict-defaults": (SAMEDAY, DEFAULTS),
    "verdict-defaults-sweeps": (SAMEDAY, SAMEDAY),
    "verdict-floor": (FLOOR_SWEEPS, FLOOR_FOLLOW),
    "verdict-floor-sweeps": (FLOOR_SWEEPS, FLOOR_SWEEPS),
    "verdict-off": (OFF_SWEEPS, UNC_OFF),
    "verdict-off-measured": (OFF_SWEEPS, UNC_MEASURED),
    "verdict-off-sweeps": (OFF_SWEEPS, OFF_SWEEPS),
    "verdict-confirm": (CONFIRM, CONFIRM),
    "verdict-confirm2": (CONFIRM2, CONFIRM2),
    "verdict-confirm3": (CONFIRM3, CONFIRM3),
    "verdict-confirm4": (CONFIRM4, CONFIRM4),
    "verdict-confirm5": (CONFIRM5, CONFIRM5),
    "verdict-confirm6": (CONFIRM6, CONFIRM6),
    "verdict-confirm7": (CONFIRM7, CONFIRM7),
    "verdict-confirm8": (CONFIRM8, CONFIRM8),
    "verdict-confirm9": (CONFIRM9, CONFIRM9),
    "verdict-slack": (SLACK, SLACK),
    "verdict-probes1": (PROBES1, PROBES1),
    "verdict-bands": (BANDS, BANDS),
    "verdict-estimated": (ESTIMATED, ESTIMATED),
    "verdict-follow-only": (FOLLOW_ONLY_SWEEPS, FOLLOW_ONLY),
    "verdict-slack2": (SLACK2, SLACK2),
    "verdict-follow-only-slack": (FOLLOW_ONLY_SWEEPS, FOLLOW_ONLY_SLACK),
    "verdict-rps": (RPS, RPS),
    "verdict-strata-k1": (STRATA_K1, STRATA_K1),
    "verdict-qfloor-old": (QFLOOR_OLD + QFLOOR_NEW, QFLOOR_OLD),
    "verdict-qfloor-new": (QFLOOR_OLD + QFLOOR_NEW, QFLOOR_NEW),
}
# The runs of an earlier build of the kernel (6.18.44-fc-v669) on which
# docs/fidelity.md §2-§5 evaluates the loss models offline (fidelity.py
# reads FIDELITY_REF and FIDELITY_JUDGED): ten fixed-rate sweeps and nine
# runs of the daemon at its defaults then. Their daemons differ in options that only
# --follow sees ([model] rate_uncertainty = measured; queue_depth_cost =
# yes), not the fixed-rate transfers.
FIDELITY_REF = (["line10g-s%d" % s for s in (48, 49, 51, 52)]
                + ["line10g-s54-rate-unc", "line10g-s61-depth-cost", "line10g-s62-depth-cost"]
                + ["line10g-s%d" % s for s in (70, 71, 72)])
FIDELITY_JUDGED = ["line10g-s%d" % s for s in range(70, 79)]
# make e2e-pause: RBUDP+ against RBUDP with a busy-polling receiver on a
# 512 KiB buffer (claim 4).
PAUSE = "make-e2e-pause-s80"
# make e2e at its defaults: its TCP copies (table tcp).
MAKE_E2E = "make-e2e-s79"

# One run per load kind that is not busy loops (run.sh -L), each
# judged by its own sweep.
LOADS = ["loads-nice10-k3", "loads-quota25-k2", "loads-duty50-k1", "loads-io-k2"]
# The same loads with the daemon's capacity from the saturated drain.
LOADS_DRAIN = ["loads-quota25-k2-drain", "loads-nice10-k3-drain", "loads-duty50-k1-drain",
               "loads-io-k2-drain"]
# Two of them again with the off-CPU windows' loss too ([model] loss = windows).
LOADS_WINDOWS = ["loads-quota25-k2-windows", "loads-nice10-k3-windows"]
# Each at the daemon's defaults on the current build ([model] loss =
# service, loss_episodes = windows, quota_phases = yes), with a second quota.
LOADS_SERVICE = ["loads-nice10-k3-service", "loads-quota25-k2-service",
                 "loads-quota40-k1-service", "loads-duty50-k1-service", "loads-io-k2-service"]
# The two quotas the same day with [model] quota_phases = no (the windows).
LOADS_NOPHASES = ["loads-quota25-k2-nophases", "loads-quota40-k1-nophases"]
# Each again with the saturated drain's floor and the measured spread
# ([model] drain_floor = yes, rate_uncertainty = measured), on a later day.
LOADS_FLOOR = ["loads-nice10-k3-floor", "loads-quota25-k2-floor", "loads-quota40-k1-floor",
               "loads-duty50-k1-floor", "loads-io-k2-floor"]
# And with the floor but without the spread (rate_uncertainty = off, the
# default since), on the day of UNC_OFF.
LOADS_OFF = ["loads-nice10-k3-off", "loads-quota25-k2-off", "loads-quota40-k1-off",
             "loads-duty50-k1-off", "loads-io-k2-off"]


def _loads_rounds(first, tags):
    """{load: its runs} of three rounds over the loads of @tags, in order,
    seeds from @first: round r, load i has seed first + 5 r + i."""
    return {name: ["loads-%s-s%d" % (tag, first + 5 * r + i) for r in range(3)]
            for i, (name, tag) in enumerate(tags)}


_LOAD_TAGS = [("nice:10", "nice10-k3"), ("quota:25", "quota25-k2"), ("quota:40", "quota40-k1"),
              ("duty:50", "duty50-k1"), ("io", "io-k2")]
# Each load of LOADS_OFF three times more, the same commands, in three
# rounds over the five loads (`-S 430` to `444`), on STRATA_K1's host:
# judged pooled per load (table loads-pooled).
LOADS_POOLED = _loads_rounds(430, _LOAD_TAGS)
# The same on the first host (AMD EPYC, fc-v857) with the defaults of
# CONFIRM3, the same day: three rounds of LOADS_POOLED's commands (-S 530
# to 544), then three with one rate list from 2.65 to 10 Gb/s for every
# load (-S 545 to 559), since the first lists did not reach the lossless
# rates there.
LOADS_POOLED_AMD1 = _loads_rounds(530, _LOAD_TAGS)
LOADS_POOLED_AMD2 = _loads_rounds(545, _LOAD_TAGS)
KEPT = sorted(set(sum((r + j for r, j in VERDICTS.values()), [])
                  + FIDELITY_REF + FIDELITY_JUDGED
                  + [PAUSE, MAKE_E2E] + LOADS + LOADS_DRAIN + LOADS_WINDOWS
                  + LOADS_SERVICE + LOADS_NOPHASES + LOADS_FLOOR + LOADS_OFF
                  + [FINE_K1] + STRATA_K1 + sum(LOADS_POOLED.values(), [])
                  + sum(LOADS_POOLED_AMD1.values(), []) + sum(LOADS_POOLED_AMD2.values(), [])))
# Kept for other documents, whose own analysis scripts compute their tables
# from them: here only checked to be named by that document.
OTHER_DOCS = {
    "shape-20261128": "docs/shape.md",	# tests/e2e/shape_analyze.py
    "streams": "docs/streams.md",		# tests/e2e/streams_analyze.py
    "buffer": "docs/buffer.md",		# tests/e2e/buffer_analyze.py
    "offwin": "docs/fidelity.md",		# tests/e2e/fidelity_windows.py
    "make-e2e-between-1": "docs/e2e.md",	# tests/e2e/pause_ab.py
}
BEGIN = re.compile(r"^<!-- table ([a-z0-9_-]+): tests/e2e/doctables\.py -->$")
END = "<!-- end table -->"


class Mismatch(Exception):
    pass


def load(results, name):
    p = os.path.join(results, name, "results.json")
    try:
        with open(p) as f:
            return json.load(f)
    except OSError as e:
        raise Mismatch("%s: %s" % (p, e.strerror))
    except ValueError as e:
        raise Mismatch("%s: not JSON: %s" % (p, e))


def pooled(results, reference, judged_names):
    """pool.py's reference and pooled judgement, as its command line makes
    them with its default options."""
    refs = [load(results, d) for d in reference]
    judged = [load(results, d) for d in judged_names]
    names = sorted(set(reference + judged_names))
    try:
        pool.check_testbed([os.path.join(results, d) for d in names],
                           [load(results, d) for d in names])
    except pool.PoolError as e:
        raise Mismatch(str(e))
    ref = pool.reference(pool.curve(refs), 2000, 1, 3, 3)
    _, judgement, runs = pool.judge(judged_names, judged, ref)
    return ref, judgement, runs, judged[0]["meta"]


def section(md, heading, prefix=False):
    """The lines of a markdown text from the line after HEADING (a "## "
    line; prefix: the first line that begins with it) to the next "## "
    heading or the end, without the blank lines around them."""
    lines = md.splitlines()
    try:
        i = next(n for n, l in enumerate(lines)
                 if l == heading or (prefix and l.startswith(heading))) + 1
    except StopIteration:
        raise Mismatch("no %r in the table" % heading)
    j = next((n for n in range(i, len(lines)) if lines[n].startswith("## ")), len(lines))
    return "\n".join(lines[i:j]).strip("\n") + "\n"


def fmt(v, f):
    return "-" if v is None else f % v


def loads_table(results):
    """Per run of LOADS, its load, the counts, and claims 3 and 1 by
    its own sweep (claim 1 over all its --follow transfers, with and
    without PAUSE)."""
    out = ["| load × k | #C; effective (expected), receiver's CPU | best fixed rate "
           "(Gb/s): T (s) | chosen (Gb/s) / best (claim 3, ±15 %) | `--follow` T / "
           "best (claim 1, ≤ 1.10) | verdict | model capacity; measured drain when lossy "
           "(Gb/s) | capacity from the drain at `--follow` starts | daemon's record: T measured "
           "/ predicted (median); first-round loss predicted / measured (mean) |",
           "|---|---|---|---|---|---|---|---|---|"]
    label = {d: " (queue)" for d in LOADS}
    label.update({d: " (queue, drain)" for d in LOADS_DRAIN})
    label.update({d: " (windows, drain)" for d in LOADS_WINDOWS})
    label.update({d: " (service)" for d in LOADS_SERVICE})
    label.update({d: " (service, no phases)" for d in LOADS_NOPHASES})
    label.update({d: " (service, floor)" for d in LOADS_FLOOR})
    label.update({d: " (service, floor, spread off)" for d in LOADS_OFF})
    for d in LOADS_OFF + LOADS_FLOOR + LOADS_SERVICE + LOADS_NOPHASES + LOADS + LOADS_DRAIN + LOADS_WINDOWS:
        r = load(results, d)
        meta = r["meta"]
        k = int(meta["ks"][0])
        p = r["per_k"][str(k)]
        fixed = [x for x in r["runs"] if x["k"] == k and x["mode"] == "fixed"
                 and x["tag"] == "main" and not x["disturbed"] and x.get("daemon_before")]
        plain = analyze.median([x["daemon_before"].get("recv_cpu_bound") for x in fixed])
        eff = analyze.median([x["daemon_before"].get("recv_cpu_bound_eff") for x in fixed])
        best = p.get("best") or {}
        c3 = p["claims"].get("chosen_vs_best_rate") or {}
        t, n = 0.0, 0
        for f in (p["follow"], p["follow_nopause"]):
            if f["time_s"]["n"]:
                t += f["time_s"]["mean"] * f["time_s"]["n"]
                n += f["time_s"]["n"]
        tb = (best.get("time_s") or {}).get("mean")
        c1 = t / n / tb if n and tb else None
        ok3 = c3.get("holds")
        ok1 = c1 is not None and c1 <= analyze.CLAIM1_MAX
        dg = p.get("diagnosis") or {}
        cap = dg.get("model_capacity_bps")
        drain = (dg.get("drain_bps_lossy_runs") or {}).get("mean")
        dv, o = p.get("daemon_inputs_at_follow") or {}, p.get("outcomes") or {}
        out.append("| %s × %d | %s; %s (%.2f) | %s: %s | %s; %s | %s (%d) | %s | %s; %s | %s | %s |" % (
            meta.get("load", "busy") + label.get(d, ""), k,
            fmt(plain, "%.2f"), fmt(eff, "%.2f"),
            loads.expect(meta.get("load"), k),
            fmt(best.get("rate_bps") and best["rate_bps"] / 1e9, "%.2f"), fmt(tb, "%.3f"),
            fmt(c3.get("chosen_first_bps") and c3["chosen_first_bps"] / 1e9, "%.2f"),
            fmt(c3.get("ratio_first"), "%.2f"), fmt(c1, "%.3f"), n,
            "%s, %s" % ("3 holds" if ok3 else "3 fails", "1 holds" if ok1 else "1 fails"),
            fmt(cap and cap / 1e9, "%.2f"), fmt(drain and drain / 1e9, "%.2f"),
            "%d of %d" % (dv["capacity_from_drain"], dv["capacity_starts"])
            if dv.get("capacity_starts") else "–",
            "%s (%d); %s / %s" % (fmt(o.get("time_ratio_median"), "%.3f"), o["n"],
                                  fmt(o.get("loss_predicted_mean"), "%.4f"),
                                  fmt(o.get("loss_measured_mean"), "%.4f")) if o else "–"))
    return "\n".join(out) + "\n"


def loads_pooled_table(results, loads):
    """pool.py's verdict per load of @loads (LOADS_POOLED or one like it):
    its runs' --follow transfers against their own sweeps pooled, a row
    each."""
    out = []
    for name, runs in loads.items():
        ref, judgement, _, _ = pooled(results, runs, runs)
        rows = pool.verdict_md(ref, judgement).splitlines()
        if not out:
            out = [rows[0].replace("| k |", "| load × k |", 1), rows[1]]
        out += [re.sub(r"^\| (\d+) \|", r"| %s × \1 |" % name, row) for row in rows[2:]]
    return "\n".join(out) + "\n"


def follow_runs(r, k):
    """The judged --follow transfers (with and without PAUSE) of run @r at k."""
    return [x for x in r["runs"] if x["k"] == k and x["mode"] in ("follow", "follow-nopause")
            and x["tag"] == "main" and not x["disturbed"] and x["ok"]]


def ratio_ci(a, b):
    """mean(a) / mean(b) and its 95 % interval (Welch, to first order)."""
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    va = sum((x - ma) ** 2 for x in a) / (len(a) - 1) / len(a)
    vb = sum((x - mb) ** 2 for x in b) / (len(b) - 1) / len(b)
    r = ma / mb
    se = r * (va / ma ** 2 + vb / mb ** 2) ** 0.5
    return r, r - 1.96 * se, r + 1.96 * se


def unc_ab_table(results):
    """UNC_MEASURED against UNC_OFF: per k the --follow transfers' mean T,
    the median first RATE, the mean of the rate each sent over the mean
    it was asked for in its first round, and the lossy ones, each arm; the
    ratio of the
    mean T; and the mean of the three ratios, its interval by 2000
    bootstrap resamples of the transfers within each k and arm (seed 1)."""
    arms = [[load(results, d) for d in names] for names in (UNC_MEASURED, UNC_OFF)]
    out = ["| k | `measured`: T (s), transfers | chosen (Gb/s) | sent / asked | lossy "
           "| `off`: T (s), transfers | chosen (Gb/s) | sent / asked | lossy "
           "| T measured / off [95 %] |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    times = {}
    for k in (1, 2, 3):
        row = ["%d" % k]
        for arm, runs in enumerate(arms):
            fr = sum((follow_runs(r, k) for r in runs), [])
            times[k, arm] = [x["transfer_time_s"] for x in fr]
            row += ["%.3f, %d" % (sum(times[k, arm]) / len(fr), len(fr)),
                    "%.2f" % (analyze.median([x["rate_first_bps"] for x in fr]) / 1e9),
                    "%.2f" % (sum(x["achieved_rate_bps"] / x["rate_round1_mean_bps"]
                                  for x in fr) / len(fr)),
                    "%d" % sum(1 for x in fr if x["loss_first_round"] > 0)]
        row.append("%.3f [%.3f, %.3f]" % ratio_ci(times[k, 0], times[k, 1]))
        out.append("| " + " | ".join(row) + " |")

    def mean_ratio(t):
        return sum(sum(t[k, 0]) / len(t[k, 0]) / (sum(t[k, 1]) / len(t[k, 1]))
                   for k in (1, 2, 3)) / 3
    rng = random.Random(1)
    boot = sorted(mean_ratio({key: [rng.choice(v) for _ in v] for key, v in times.items()})
                  for _ in range(2000))
    out.append("| 1-3 | | | | | | | | | %.3f [%.3f, %.3f] (mean of the ratios) |"
               % (mean_ratio(times), boot[49], boot[1949]))
    return "\n".join(out) + "\n"


def fine_table(results):
    """FINE_K1's sweep: per rate the mean T and its 99 % interval and the
    transfers that lost part of their first round; then its --follow."""
    p = load(results, FINE_K1)["per_k"]["1"]
    out = ["| rate (Gb/s) | T (s) [99 %] | first round lossy |", "|---|---|---|"]
    for pt in p["sweep"]:
        t = pt["time_s"]
        out.append("| %.2f | %.3f [%.3f, %.3f] | %d of %d |" % (
            pt["rate_bps"] / 1e9, t["mean"], t["ci99"][0], t["ci99"][1],
            pt["runs_lossy"], pt["runs"] - pt["failed"]))
    fr = follow_runs(load(results, FINE_K1), 1)
    t = [x["transfer_time_s"] for x in fr]
    out.append("| `--follow`: %.2f (median first RATE) | %.3f (mean of %d) | %d of %d |" % (
        analyze.median([x["rate_first_bps"] for x in fr]) / 1e9, sum(t) / len(t), len(t),
        sum(1 for x in fr if x["loss_first_round"] > 0), len(fr)))
    return "\n".join(out) + "\n"


def seeds(names):
    """`-S A` to `B` of a run of consecutive seeds' directories."""
    s = [int(n.rsplit("-s", 1)[1]) for n in names]
    return "%d-%d" % (min(s), max(s))


def rate_rule_table(results, sets, ks=(1, 2, 3)):
    """Per set of sweeps judged by their own --follow: at each k the
    chosen rate over the pooled best and the share of bootstrap resamples
    whose best lies outside +-RATE_RULE_MAX of it (pool.rate_fail: a
    chooser of the best rate itself judged by a repeat of the five
    sweeps); last, the share outside at one k at least (the resamples of
    each k are drawn independently)."""
    band = "±%.0f %%" % (100 * pool.RATE_RULE_MAX)
    out = ["| sweeps (`-S`), kernel | " + " | ".join(
        "k = %d: chosen / best (Gb/s); best's own chooser outside %s" % (k, band) for k in ks)
        + " | best's own chooser outside %s at some k |" % band,
        "|---|" + "---|" * (len(ks) + 1)]
    for names in sets:
        ref, judgement, _, meta = pooled(results, names, names)
        cells, within = [], 1.0
        for k in ks:
            j = judgement[k]["follow"]
            f = ref[k]["oracle_rate_rule_fail"]
            within *= 1 - f
            cells.append("%.2f (%s); %.0f %%" % (j["chosen_over_best"],
                                                 pool.gbps(ref[k]["best"]["rate_bps"]), 100 * f))
        out.append("| %s, %s | %s | %.0f %% |" % (seeds(names), meta["kernel"],
                                                   " | ".join(cells), 100 * (1 - within)))
    return "\n".join(out) + "\n"


def drain_gbps(x):
    """The saturated drain the daemon had learned at transfer @x's start,
    Gb/s of payload, or None before it had one."""
    d = (x.get("daemon_before") or {}).get("drain_pps")
    return d * x["payload_bytes"] * 8 / 1e9 if d else None


STRATUM_MIN_PER_RATE = 6	# fixed-rate transfers for a rate to count


def strata_table(results, names, k):
    """The runs @names at @k split by the drain the daemon had at each
    transfer's start, at its median: per half, the fixed rates' mean T
    (and lossy count), its best rate, and its --follow transfers' median
    first RATE and mean T against that best. The split is the daemon's own
    input, measured before the transfer it labels."""
    xs = []
    for r in (load(results, d) for d in names):
        xs += [x for x in r["runs"] if x["k"] == k and x["tag"] == "main" and x["ok"]
               and not x["disturbed"]]
    have = [x for x in xs if drain_gbps(x) is not None]
    cut = analyze.median([drain_gbps(x) for x in have])
    rates = sorted({x["rate_req_bps"] for x in have if x["mode"] == "fixed"})
    out = ["| drain at the start (Gb/s) | " + " | ".join(
        "%.2f" % (r / 1e9) for r in rates) + " | best: T (s) | `--follow`: chosen / best; "
        "T / best (lossy) |", "|---" * (len(rates) + 3) + "|"]
    for lo, hi in ((0.0, cut), (cut, float("inf"))):
        part = [x for x in have if lo <= drain_gbps(x) < hi]
        cells, mean_t = [], {}
        for rate in rates:
            ts = [x for x in part if x["mode"] == "fixed" and x["rate_req_bps"] == rate]
            if len(ts) < STRATUM_MIN_PER_RATE:
                cells.append("– (%d)" % len(ts))
                continue
            mean_t[rate] = sum(x["transfer_time_s"] for x in ts) / len(ts)
            cells.append("%.3f (%d/%d)" % (mean_t[rate], sum(
                1 for x in ts if x["loss_first_round"] > 0), len(ts)))
        fr = [x for x in part if x["mode"] in ("follow", "follow-nopause")]
        if not mean_t or not fr:
            raise Mismatch("%s, k = %d: a half of the split has no rate with %d "
                           "fixed-rate transfers or no --follow transfer"
                           % (", ".join(names), k, STRATUM_MIN_PER_RATE))
        best = min(mean_t, key=mean_t.get)
        chosen = analyze.median([x["rate_first_bps"] for x in fr])
        ft = sum(x["transfer_time_s"] for x in fr) / len(fr)
        out.append("| %s %.2f: %d | %s | %.2f: %.3f | %.2f (%.2f Gb/s); %.2f (%d of %d) |" % (
            "<" if lo == 0.0 else "≥", cut, len(part), " | ".join(cells), best / 1e9,
            mean_t[best], chosen / best, chosen / 1e9, ft / mean_t[best],
            sum(1 for x in fr if x["loss_first_round"] > 0), len(fr)))
    out.append("| none yet: %d | | | |" % (len(xs) - len(have)) + " |" * (len(rates) - 1))
    return "\n".join(out) + "\n"


def tables(results):
    """{name: table text} of every table the document quotes."""
    made = {}
    for name, (reference, judged) in VERDICTS.items():
        ref, judgement, _, _ = pooled(results, reference, judged)
        made[name] = pool.verdict_md(ref, judgement)
    made["pause"] = section(analyze.table(load(results, PAUSE)),
                            "## RBUDP+ (--follow, PAUSE obeyed) vs RBUDP (--follow --no-pause)")
    made["tcp"] = section(analyze.table(load(results, MAKE_E2E)),
                          "## TCP over the same emulated path", prefix=True)
    if LOADS:
        made["loads"] = loads_table(results)
    made["unc-ab"] = unc_ab_table(results)
    made["fine-k1"] = fine_table(results)
    made["loads-pooled"] = loads_pooled_table(results, LOADS_POOLED)
    made["loads-pooled-amd1"] = loads_pooled_table(results, LOADS_POOLED_AMD1)
    made["loads-pooled-amd2"] = loads_pooled_table(results, LOADS_POOLED_AMD2)
    made["strata-kept"] = strata_table(results, CONFIRM + OFF_SWEEPS, 1)
    made["strata-k1"] = strata_table(results, STRATA_K1, 1)
    made["rate-rule"] = rate_rule_table(results, RATE_RULE_SETS)
    made["rate-rule-rps"] = rate_rule_table(results, [RPS])
    return made


def doc_blocks(text):
    """[(name, first line, end line)] of the tables in the document: the
    lines between a begin marker and the end marker."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if m:
            j = next((n for n in range(i + 1, len(lines)) if lines[n] == END), None)
            if j is None:
                raise Mismatch("line %d: table %s has no %r" % (i + 1, m.group(1), END))
            out.append((m.group(1), i + 1, j))
            i = j
        i += 1
    return out


def block_text(table):
    """What sits between the markers: the table with a blank line around."""
    return "\n" + table + "\n"


def check_doc(doc, made):
    with open(doc) as f:
        lines = f.read().split("\n")
    blocks = doc_blocks("\n".join(lines))
    errs = []
    names = [b[0] for b in blocks]
    for name in sorted(set(made) - set(names)):
        errs.append("%s: no table %s (%s)" % (doc, name, BEGIN.pattern))
    for name, a, b in blocks:
        if name not in made:
            errs.append("%s:%d: table %s is not one doctables.py makes" % (doc, a, name))
            continue
        have = "\n".join(lines[a:b]) + "\n"
        want = block_text(made[name])
        if have != want:
            diff = difflib.unified_diff(have.splitlines(), want.splitlines(),
                                        "%s (table %s)" % (doc, name),
                                        "made from the kept runs", lineterm="")
            errs.append("\n".join(diff))
    return errs


def check_runs(results):
    errs = []
    try:
        present = sorted(d for d in os.listdir(results)
                         if os.path.isdir(os.path.join(results, d)))
    except OSError as e:
        raise Mismatch("%s: %s" % (results, e.strerror))
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for d in sorted(set(present) & set(OTHER_DOCS)):
        try:
            with open(os.path.join(top, OTHER_DOCS[d])) as f:
                named = "tests/e2e/results/%s" % d in f.read()
        except OSError as e:
            named = False
        if not named:
            errs.append("%s/%s: kept for %s, which does not name it"
                        % (results, d, OTHER_DOCS[d]))
    present = [d for d in present if d not in OTHER_DOCS]
    for d in sorted(set(present) - set(KEPT)):
        errs.append("%s/%s: kept, but no table of docs/e2e.md or docs/fidelity.md is made "
                    "from it (list it in tests/e2e/doctables.py or remove it)" % (results, d))
    for d in sorted(set(KEPT) - set(present)):
        errs.append("%s/%s: missing" % (results, d))
    for d in sorted(set(KEPT) & set(present)):
        p = os.path.join(results, d, "table.md")
        try:
            with open(p) as f:
                have = f.read()
        except OSError as e:
            errs.append("%s: %s" % (p, e.strerror))
            continue
        want = analyze.table(load(results, d))
        if have != want:
            diff = difflib.unified_diff(have.splitlines(), want.splitlines(), p,
                                        "analyze.py --from-results", lineterm="")
            errs.append("\n".join(diff))
    return errs


def write(doc, made, results, fig):
    with open(doc) as f:
        lines = f.read().split("\n")
    blocks = doc_blocks("\n".join(lines))
    missing = sorted(set(made) - {b[0] for b in blocks})
    if missing:
        raise Mismatch("%s: no place for table(s) %s: add the markers first"
                       % (doc, ", ".join(missing)))
    for name, a, b in reversed(blocks):
        if name in made:
            lines[a:b] = block_text(made[name]).split("\n")[:-1]
    with open(doc, "w") as f:
        f.write("\n".join(lines))
    for d in KEPT:
        with open(os.path.join(results, d, "table.md"), "w") as f:
            f.write(analyze.table(load(results, d)))
    ref, _, runs, meta = pooled(results, SAMEDAY, DEFAULTS)
    try:
        pool.plot(ref, runs, meta, len(SAMEDAY), fig)
    except pool.PoolError as e:
        raise Mismatch(str(e))


def main():
    ap = argparse.ArgumentParser(
        description="Check (or write) the tables docs/e2e.md quotes against the runs "
                    "kept in tests/e2e/results/.")
    ap.add_argument("--check", action="store_true", help="compare (the default)")
    ap.add_argument("--write", action="store_true",
                    help="put the tables into the document, the kept runs' table.md "
                         "and the figure")
    ap.add_argument("--doc", default=os.path.join(SRC, "docs", "e2e.md"),
                    help="the document (default docs/e2e.md)")
    ap.add_argument("--results", default=os.path.join(SRC, "tests", "e2e", "results"),
                    help="the kept runs (default tests/e2e/results)")
    ap.add_argument("--plot", default=os.path.join(SRC, "docs", "e2e.png"),
                    help="with --write: the figure (default docs/e2e.png)")
    args = ap.parse_args()
    if args.check and args.write:
        ap.error("--check and --write: one or the other")
    try:
        made = tables(args.results)
        if args.write:
            write(args.doc, made, args.results, args.plot)
            return 0
        errs = check_runs(args.results) + check_doc(args.doc, made)
    except Mismatch as e:
        print("doctables.py: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("doctables.py: %s: %s" % (e.filename, e.strerror), file=sys.stderr)
        return 2
    for e in errs:
        print(e, file=sys.stderr)
    if errs:
        print("doctables.py: %d mismatch(es): the document or the kept runs changed"
              % len(errs), file=sys.stderr)
        return 1
    print("doctables.py: %d tables of %s and %d kept runs agree"
          % (len(made), os.path.relpath(args.doc), len(KEPT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

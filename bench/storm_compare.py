#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rxbneck's CTMC solve against Storm's on the same exported chains.

For each chain, `rxbneckctl model ... --export-prism` writes the tagged-
customer chain (docs/model.md §7); Storm (stormpy, run from the venv that
bench/storm.sh makes) loads it and answers R=? [ F "absorbed" ], the mean
response time E[R], which rxbneck gets by its absorption solve from the
initial distribution alpha that the exported start state fans out to.

The rule, fixed before the runs:
  * rxbneck's time: the median absorption solve (ctmc_absorb_mean() on the
    tagged chain from alpha) of `bench_solver --time-chain` (7 repetitions,
    3 above 20 000 states); its steady-state solve (the alpha Storm reads
    from the file) is printed beside it.
  * Storm's time: the model_checking() call alone, the model already built,
    the median of 3 calls, per engine, each engine in its own process with
    its own environment: sound (stormpy's default environment), topological
    (Storm's default solver), gmm++ and eigen at their defaults, native
    Gauss-Seidel and Jacobi at precision 1e-12; elimination and eigen only
    below 20 000 states (in a trial at 120 122 states eigen took 158 s and
    missed E[R] by 2e-3). An engine is cut off after 300 s.
  * An engine is accurate when its E[R] is within 1e-9 (relative) of
    rxbneck's; rxbneck's own E[R] must agree with Storm's native
    Gauss-Seidel at 1e-12 to 1e-10, or the comparison fails.
  * The ratio is rxbneck's time over the fastest accurate engine's; the
    targets are <= 2 at 4 098 states and <= 1 from 10^5 states up. The
    ratio to the fastest engine of any accuracy is printed too.
Exit status 1 when a target or the agreement check fails.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = [
    # name, rxbneckctl model arguments, (P, #C, #I) for --time-chain
    ("seed net #C 4095 #I 4095", ["--cpu-bound", "4095", "--io-bound", "4095"], (1, 4095, 4095)),
    ("SMP P 4 #C 7 #I 10", ["--cpus", "4", "--cpu-bound", "7", "--io-bound", "10"], (4, 7, 10)),
    ("SMP P 4 #C 8 #I 12", ["--cpus", "4", "--cpu-bound", "8", "--io-bound", "12"], (4, 8, 12)),
]
ENGINES = ["sound", "topological", "gmm++", "native-gs", "native-jacobi", "eigen", "elimination"]
SMALL_ONLY = {"eigen", "elimination"}
SMALL_STATES = 20000
ACCURATE_REL = 1e-9
CHECK_ENGINE, CHECK_REL = "native-gs", 1e-10
ENGINE_TIMEOUT_S = 300
REPS = 3


def target_for(states):
    return 2.0 if states < 100000 else 1.0


# ------------------------------------------------------------ one engine --

def run_engine(name, prefix):
    """In this process: load @prefix, time model checking with engine @name."""
    import stormpy
    import stormpy.developer as dev

    t0 = time.perf_counter()
    model = stormpy.build_model_from_explicit(prefix + ".tra", prefix + ".lab",
                                              state_rewards=prefix + ".srew")
    load_ms = (time.perf_counter() - t0) * 1e3
    prop = stormpy.parse_properties('R=? [ F "absorbed" ]')[0]
    if name == "sound":
        env = stormpy.environments.sound()
    else:
        env = dev.Environment()
        solver = env.solver()
        kind = {"topological": dev.EquationSolverType.TOPOLOGICAL,
                "gmm++": dev.EquationSolverType.GMMXX,
                "eigen": dev.EquationSolverType.EIGEN,
                "elimination": dev.EquationSolverType.ELIMINATION}
        if name in kind:
            solver.set_linear_equation_solver_type(kind[name])
        else:
            solver.set_linear_equation_solver_type(dev.EquationSolverType.NATIVE)
            native = solver.native()
            native.method = {"native-gs": dev.NativeLinearEquationSolverMethod.GAUSS_SEIDEL,
                             "native-jacobi": dev.NativeLinearEquationSolverMethod.JACOBI}[name]
            native.precision = stormpy.Rational(1e-12)
            native.maximal_number_of_iterations = 10**7
    times = []
    for _ in range(REPS):
        t0 = time.perf_counter()
        res = stormpy.model_checking(model, prop, environment=env)
        times.append((time.perf_counter() - t0) * 1e3)
    value = res.get_value(model.initial_states[0])
    print(json.dumps({"ms": statistics.median(times), "value": value,
                      "load_ms": load_ms, "states": model.nr_states}))


# ------------------------------------------------------------ the chains --

def to_storm(prefix, out):
    """PRISM explicit files -> Storm's explicit format (a model hint, a
    #DECLARATION label header, no count lines)."""
    with open(prefix + ".tra") as f, open(out + ".tra", "w") as g:
        f.readline()
        g.write("ctmc\n")
        shutil.copyfileobj(f, g)
    with open(prefix + ".srew") as f, open(out + ".srew", "w") as g:
        f.readline()
        shutil.copyfileobj(f, g)
    with open(prefix + ".lab") as f, open(out + ".lab", "w") as g:
        names = dict(t.split("=") for t in f.readline().split())
        names = {k: v.strip('"') for k, v in names.items()}
        g.write("#DECLARATION\n%s\n#END\n" % " ".join(names.values()))
        for line in f:
            state, ids = line.split(":")
            g.write("%s %s\n" % (state, " ".join(names[k] for k in ids.split())))


def export(build, args, prefix):
    out = subprocess.run([os.path.join(build, "rxbneckctl"), "model", *args,
                          "--export-prism", prefix, "--json", "--curve-rows", "0"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["mean_response_s"], d["prism_export"]["states"]


def time_chain(build, pci):
    out = subprocess.run([os.path.join(build, "bench", "bench_solver"), "--time-chain",
                          *map(str, pci)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def storm_engine(name, prefix):
    try:
        p = subprocess.run([sys.executable, __file__, "--engine", name, prefix],
                           capture_output=True, text=True, timeout=ENGINE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, "over %d s" % ENGINE_TIMEOUT_S
    if p.returncode != 0:
        return None, "failed: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(p.stdout.strip().splitlines()[-1]), None


def compare(build, tmp, case):
    name, args, pci = case
    prefix = os.path.join(tmp, "chain%d" % pci[1])
    mean_cli, states = export(build, args, prefix)
    to_storm(prefix, prefix + "-storm")
    rx = time_chain(build, pci)
    ntrans = sum(1 for _ in open(prefix + ".tra")) - 1
    print("  %s: %d exported states, %d transitions" % (name, states, ntrans))
    print("     rxbneck  absorption %9.2f ms (%s), steady state %.2f ms (%s); E[R] %.17g s"
          % (rx["absorb_ms"], rx["absorb_method"], rx["steady_ms"], rx["steady_method"],
             rx["mean_s"]))
    ok = abs(mean_cli - rx["mean_s"]) <= 1e-12 * rx["mean_s"]
    if not ok:
        print("     the CLI's E[R] %.17g differs from --time-chain's: FAILED" % mean_cli)
    best, best_any, checked = None, None, False
    for eng in ENGINES:
        if eng in SMALL_ONLY and states > SMALL_STATES:
            continue
        res, why = storm_engine(eng, prefix + "-storm")
        if res is None:
            print("     storm    %-13s %s" % (eng, why))
            continue
        rel = abs(res["value"] - rx["mean_s"]) / rx["mean_s"]
        accurate = rel <= ACCURATE_REL
        print("     storm    %-13s %9.2f ms  E[R] rel. diff %.1e%s"
              % (eng, res["ms"], rel, "  (accurate)" if accurate else ""))
        if accurate and (best is None or res["ms"] < best[1]):
            best = (eng, res["ms"])
        if best_any is None or res["ms"] < best_any[1]:
            best_any = (eng, res["ms"])
        if eng == CHECK_ENGINE:
            checked = rel <= CHECK_REL
    if not checked:
        print("     rxbneck's E[R] not confirmed by Storm's %s to %.0e: FAILED"
              % (CHECK_ENGINE, CHECK_REL))
        ok = False
    if best is None:
        print("     no accurate Storm engine: FAILED")
        return False
    ratio, target = rx["absorb_ms"] / best[1], target_for(states)
    verdict = "ok" if ratio <= target else "MISSED"
    print("     -> rxbneck / Storm at %d states: %.2f (fastest accurate: %s %.2f ms; target <= %g): %s"
          % (states, ratio, best[0], best[1], target, verdict))
    print("        (fastest of any accuracy: %s %.2f ms, ratio %.2f; with rxbneck's steady state: %.2f)"
          % (best_any[0], best_any[1], rx["absorb_ms"] / best_any[1],
             (rx["absorb_ms"] + rx["steady_ms"]) / best[1]))
    return ok and ratio <= target


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="the build directory (rxbneckctl, bench/bench_solver)")
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("prefix", nargs="?", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.engine:
        run_engine(a.engine, a.prefix)
        return 0
    if not a.build:
        ap.error("--build is required")
    import stormpy
    import stormpy.info
    print("Storm %s (stormpy %s): E[R] = R=? [ F \"absorbed\" ] on the chain rxbneckctl exports,"
          % (stormpy.info.storm_version(), stormpy.__version__))
    print("model checking alone against rxbneck's absorption solve (docs/model.md §8)")
    ok = True
    with tempfile.TemporaryDirectory(prefix="rxb-storm-") as tmp:
        for case in CASES:
            ok &= compare(a.build, tmp, case)
    print("storm_compare: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# docs/fidelity.md's table is what tests/e2e/fidelity.py makes of the runs
# kept in tests/e2e/results/ with this build's rxbneckctl, and the check
# catches a change on either side:
# 1. fidelity.py --check passes on the tree as it is;
# 2. a copy of the document with one ratio changed fails, with a diff;
# 3. a copy of the kept runs in which one fixed-rate transfer at k = 3,
#    2.65 Gb/s lost 5 % more of its first round fails (the measured mean
#    moves);
# 4. tests/e2e/fidelity_windows.py --check passes (§4's table);
# 5. fidelity.py --drain learned --check passes (§5.2's table), and
#    test_drainlearn.py: its drain rule against daemon/model/drain.c;
# 6. tests/e2e/fidelity_service.py --check passes (§6's tables);
# 7. test_wakewaits.py: wakewaits.py (§6.3's waits at full resolution),
#    and test_dropwhen.py: dropwhen.py (the drops against the waits).
# Exit 0 pass, 77 skip, 1 fail.
set -u
SRC=${RXB_SRC:-.}
BUILD=${RXB_BUILD:-$SRC/build}
FID=$SRC/tests/e2e/fidelity.py
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "e2e_fidelity: SKIP, no /usr/bin/python3" >&2; exit 77; }
[ -x "$BUILD/rxbneckctl" ] || { echo "e2e_fidelity: SKIP, no $BUILD/rxbneckctl" >&2; exit 77; }

NAME=e2e_fidelity
. "$(dirname "$0")/doctable.inc"

# 1.
"$PY" "$FID" --build "$BUILD" --check > "$work/out" 2> "$work/err" ||
	bad "the tree's docs/fidelity.md and kept runs disagree: $(head -c 2000 "$work/err")"

# 2. The k = 3, 2.65 Gb/s row: the spread model's loss ratio, bold, +0.01.
"$PY" - "$SRC/docs/fidelity.md" "$work/fidelity.md" <<'PY' || bad "cannot make the changed document"
import re, sys
s = open(sys.argv[1]).read()
def bump(m):
    return m.group(1) + "%.2f" % (float(m.group(2)) + 0.01) + m.group(3)
t, n = re.subn(r"(\n\| 3 \| 2\.65 \|.*\| [0-9.]+, \*\*)([0-9.]+)(\*\* \| [0-9.]+ \|\n)", bump, s, count=1)
if n != 1:
    sys.exit("no k = 3, 2.65 Gb/s row in the fidelity table")
open(sys.argv[2], "w").write(t)
PY
doctable_refused "a changed document" '^-| 3 | 2.65 ' \
	"$PY" "$FID" --build "$BUILD" --check --doc "$work/fidelity.md"

# 3. The kept runs, changed.
doctable_edit_run "$work/results" '
r = next(r for r in runs if r["k"] == 3 and r["mode"] == "fixed" and r["tag"] == "main"
         and r["rate_req_bps"] == 2.65e9 and not r["disturbed"] and r["ok"])
r["loss_first_round"] += 0.05' || exit 1
doctable_refused "a changed kept run" "" \
	"$PY" "$FID" --build "$BUILD" --check --results "$work/results"

# 4. The windows model's table (§4) is what its kept transfers give.
"$PY" "$SRC/tests/e2e/fidelity_windows.py" --build "$BUILD" --check > "$work/out" 2> "$work/err" ||
	bad "docs/fidelity.md §4 and results/offwin disagree: $(head -c 2000 "$work/err")"

# 5. The learned drain's table (§5.2) and the emulation under it.
"$PY" "$FID" --build "$BUILD" --drain learned --check > "$work/out" 2> "$work/err" ||
	bad "docs/fidelity.md §5.2 and the kept runs disagree: $(head -c 2000 "$work/err")"
"$PY" "$SRC/tests/e2e/test_drainlearn.py" > "$work/out" 2>&1 ||
	bad "drainlearn.py and drain.c disagree: $(tail -c 2000 "$work/out")"

# 6. The service model (§6).
"$PY" "$SRC/tests/e2e/fidelity_service.py" --build "$BUILD" --check > "$work/out" 2> "$work/err" ||
	bad "docs/fidelity.md §6 and results/offwin disagree: $(head -c 2000 "$work/err")"

# 7. The waits at full resolution against their log2 slots (§6.3).
"$PY" "$SRC/tests/e2e/test_wakewaits.py" > "$work/out" 2>&1 ||
	bad "wakewaits.py: $(tail -c 2000 "$work/out")"
"$PY" "$SRC/tests/e2e/test_dropwhen.py" > "$work/out" 2>&1 ||
	bad "dropwhen.py: $(tail -c 2000 "$work/out")"

[ "$fail" = 0 ] && echo "e2e_fidelity: ok"
exit "$fail"

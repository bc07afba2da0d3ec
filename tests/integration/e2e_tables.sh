#!/usr/bin/env bash
# The tables docs/e2e.md quotes are what the runs kept in tests/e2e/results/
# give (tests/e2e/doctables.py), and the check catches a change on either
# side:
# 1. doctables.py --check passes on the tree as it is.
# 2. A copy of docs/e2e.md with one number of the reference runs' own
#    pooled verdict (loss = queue) changed (claim 1's ratio at k = 2)
#    fails, naming the table.
# 3. A copy of the kept runs in which one judged --follow transfer at k = 3
#    took 1 s longer fails (the verdict's pooled means move), and so does
#    a copy with one more run directory (a run no table is made from) and
#    one without a kept run.
# 4. test_doctables.py: the split by the daemon's drain (strata-* tables)
#    on made-up runs whose halves' best rates are known, and the rate-rule
#    table's bootstrap shares on made-up runs where they follow by hand.
# Exit 0 pass, 77 skip, 1 fail.
set -u
SRC=${RXB_SRC:-.}
TABLES=$SRC/tests/e2e/doctables.py
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "e2e_tables: SKIP, no /usr/bin/python3" >&2; exit 77; }

NAME=e2e_tables
. "$(dirname "$0")/doctable.inc"

# 1.
"$PY" "$TABLES" > "$work/out" 2> "$work/err" ||
	bad "the tree's docs/e2e.md and kept runs disagree: $(head -c 2000 "$work/err")"

# 2. The k = 2 row of the verdict: "| 2 | 4.00: 0.631 | 1.14 [1.06, 1.23] **fails** |" -> 1.15.
"$PY" - "$SRC/docs/e2e.md" "$work/e2e.md" <<'PY' || bad "cannot make the changed document"
import re, sys
s = open(sys.argv[1]).read()
t, n = re.subn(r"(\n\| 2 \| [0-9.]+: [0-9.]+ \| )1\.14( \[)", r"\g<1>1.15\2", s, count=1)
if n != 1:
    sys.exit("no k = 2 row with claim 1 at 1.14 in the verdict table")
open(sys.argv[2], "w").write(t)
PY
doctable_refused "a changed verdict table" 'table verdict-newkernel' "$PY" "$TABLES" --doc "$work/e2e.md"

# 3. The kept runs, changed.
doctable_edit_run "$work/results" '
r = next(r for r in runs if r["k"] == 3 and r["mode"] == "follow" and r["tag"] == "main")
r["transfer_time_s"] += 1.0' line10g-s203 || exit 1
doctable_refused "a changed kept run" 'table verdict-newkernel' "$PY" "$TABLES" --results "$work/results"

cp -r "$SRC/tests/e2e/results" "$work/results2" && mkdir "$work/results2/extra-run" &&
	cp "$work/results2/line10g-s75/results.json" "$work/results2/extra-run/"
doctable_refused "an extra kept run" 'extra-run: kept, but no table' \
	"$PY" "$TABLES" --results "$work/results2"

rm -rf "$work/results2/extra-run" "$work/results2/line10g-s48"
doctable_refused "a missing kept run" 'line10g-s48' "$PY" "$TABLES" --results "$work/results2"

# 4.
"$PY" "$SRC/tests/e2e/test_doctables.py" > "$work/out" 2>&1 ||
	bad "test_doctables.py: $(head -c 2000 "$work/out")"

[ "$fail" = 0 ] && echo "e2e_tables: pass"
exit "$fail"

#!/usr/bin/env bash
# The tables docs/e2e.md quotes are what the runs kept in tests/e2e/results/
# give (tests/e2e/doctables.py), and the check catches a change on either
# side:
# 1. doctables.py --check passes on the tree as it is.
# 2. A copy of docs/e2e.md with one number of the pooled verdict changed
#    (claim 1's ratio at k = 2) fails, naming the table.
# 3. A copy of the kept runs in which one judged --follow transfer at k = 3
#    took 1 s longer fails (the verdict's pooled means move), and so does
#    a copy with one more run directory (a run no table is made from) and
#    one without a kept run.
# Exit 0 pass, 77 skip, 1 fail.
set -u
SRC=${RXB_SRC:-.}
TABLES=$SRC/tests/e2e/doctables.py
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "e2e_tables: SKIP, no /usr/bin/python3" >&2; exit 77; }

work=$(mktemp -d /tmp/rxbt-tables.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "e2e_tables: FAIL: $*" >&2; fail=1; }

# 1.
"$PY" "$TABLES" > "$work/out" 2> "$work/err" ||
	bad "the tree's docs/e2e.md and kept runs disagree: $(head -c 2000 "$work/err")"

# 2. The k = 2 row of the verdict: "| 2 | 3.50: 0.754 | 1.02 [0.97, 1.06] holds |" -> 1.03.
"$PY" - "$SRC/docs/e2e.md" "$work/e2e.md" <<'PY' || bad "cannot make the changed document"
import re, sys
s = open(sys.argv[1]).read()
t, n = re.subn(r"(\n\| 2 \| [0-9.]+: [0-9.]+ \| )1\.02( \[)", r"\g<1>1.03\2", s, count=1)
if n != 1:
    sys.exit("no k = 2 row with claim 1 at 1.02 in the verdict table")
open(sys.argv[2], "w").write(t)
PY
"$PY" "$TABLES" --doc "$work/e2e.md" > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" = 1 ] || bad "a changed verdict table: exit $rc, expected 1"
grep -q 'table verdict' "$work/err" || bad "a changed verdict table: not named: $(head -c 500 "$work/err")"

# 3. The kept runs, changed.
cp -r "$SRC/tests/e2e/results" "$work/results" || { bad "cannot copy the kept runs"; exit 1; }
"$PY" - "$work/results/line10g-s75/results.json" <<'PY' || bad "cannot change a kept run"
import json, sys
p = sys.argv[1]
res = json.load(open(p))
r = next(r for r in res["runs"] if r["k"] == 3 and r["mode"] == "follow" and r["tag"] == "main")
r["transfer_time_s"] += 1.0
json.dump(res, open(p, "w"))
PY
"$PY" "$TABLES" --results "$work/results" > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" = 1 ] || bad "a changed kept run: exit $rc, expected 1"
grep -q 'table verdict' "$work/err" || bad "a changed kept run: the verdict table not named"

cp -r "$SRC/tests/e2e/results" "$work/results2" && mkdir "$work/results2/extra-run" &&
	cp "$work/results2/line10g-s75/results.json" "$work/results2/extra-run/"
"$PY" "$TABLES" --results "$work/results2" > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" = 1 ] || bad "an extra kept run: exit $rc, expected 1"
grep -q 'extra-run: kept, but no table' "$work/err" || bad "an extra kept run: not named"

rm -rf "$work/results2/extra-run" "$work/results2/line10g-s48"
"$PY" "$TABLES" --results "$work/results2" > "$work/out" 2> "$work/err"
rc=$?
[ "$rc" = 1 ] || bad "a missing kept run: exit $rc, expected 1"
grep -q 'line10g-s48' "$work/err" || bad "a missing kept run: not named"

[ "$fail" = 0 ] && echo "e2e_tables: pass"
exit "$fail"

#!/usr/bin/env bash
# `rxbneckctl model --cpus P` builds the SMP tagged-customer net: its E[R]
# equals the C library's (tagged_smp_init() + tagged_analyze(), compiled
# here against build/libsolver.a) for the same counts and rates, with
# --cpus 1 it is the uniprocessor net, without balancing it is the closed form
# (#C on CPU 0 + 1) / mu_P-Net, and the chain it exports is the one it
# solved (E[R] recomputed here from the .tra/.srew files by Gauss-Seidel).
# Bad --cpus combinations exit 2. No root, no daemon; a few seconds.
set -u
B=${RXB_BUILD:-$(pwd)/build}
S=${RXB_SRC:-$(pwd)}
CTL=$B/rxbneckctl
T=$(mktemp -d /tmp/rxbneck-cpus.XXXXXX)
trap 'rm -rf "$T"' EXIT

die() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$CTL" ] && [ -f "$B/libsolver.a" ] || die "build first: $CTL, $B/libsolver.a"

mean() { "$CTL" model --json --curve-rows 0 "$@" | python3 -c \
	'import json, sys; print("%.17g" % json.load(sys.stdin)["mean_response_s"])'; }

# The C path: the same net from the library, Table II rates, balancing 1000/s.
cat > "$T/cpath.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "solver/tagged.h"
int main(int argc, char **argv)
{
	struct tagged_smp_params p = {
		.ncpus = atoi(argv[1]), .cpu_bound = atoi(argv[2]),
		.io_bound = atoi(argv[3]), .rates = { 4600.0, 1010.0, 41600.0 },
		.migrate_per_s = 1000.0,
	};
	struct tagged_model m;
	struct tagged_chain ch;
	struct tagged_result r;

	if (argc != 4 || tagged_smp_init(&m, &p) || tagged_analyze(&m, NULL, &ch, &r))
		return 1;
	printf("%.17g %u\n", r.mean_response_s, r.tag_states);
	tagged_chain_finish(&ch);
	tagged_model_finish(&m);
	return 0;
}
EOF
cc -std=gnu11 -O2 -I"$S" -I"$S/include" -o "$T/cpath" "$T/cpath.c" \
	"$B/libsolver.a" -llapacke -llapack -lblas -lm || die "compile the C path"

for pci in "2 3 4" "3 4 6" "4 3 5"; do
	set -- $pci
	read -r want states < <("$T/cpath" "$1" "$2" "$3") || die "C path $pci"
	got=$(mean --cpus "$1" --cpu-bound "$2" --io-bound "$3" \
		--export-prism "$T/p$1") || die "rxbneckctl --cpus $1"
	python3 - "$got" "$want" "$T/p$1" "$states" <<'PY' || die "P C I = $pci"
import sys
got, want, prefix, states = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
assert abs(got - want) <= 1e-14 * want, ("CLI vs C path", got, want)
# The exported chain: the start state fans out to alpha; E[R] = expected
# reward (1 per second in every other transient state) to absorption.
rows = {}
with open(prefix + ".tra") as f:
    n = int(f.readline().split()[0])
    for line in f:
        i, j, r = line.split()
        rows.setdefault(int(i), []).append((int(j), float(r)))
assert n == states + 1, ("exported states", n, states)
rew = [0.0] * n
with open(prefix + ".srew") as f:
    f.readline()
    for line in f:
        s, v = line.split()
        rew[int(s)] = float(v)
exit_rate = {i: sum(r for _, r in row) for i, row in rows.items()}
x = [0.0] * n
for sweep in range(10000):
    change = 0.0
    for i, row in rows.items():
        v = (rew[i] + sum(r * x[j] for j, r in row)) / exit_rate[i]
        if v > 0:
            change = max(change, abs(v - x[i]) / v)
        x[i] = v
    if change < 1e-14:
        break
start = [i for i in rows if rew[i] == 0.0 and i in exit_rate]
assert len(start) == 1, start
assert abs(x[start[0]] - want) <= 1e-10 * want, ("exported chain", x[start[0]], want)
PY
	echo "ok: --cpus $1 --cpu-bound $2 --io-bound $3: E[R] $got s, $states states"
done

# One CPU: the uniprocessor net.
[ "$(mean --cpus 1 --cpu-bound 3 --io-bound 2)" = "$(mean --cpu-bound 3 --io-bound 2)" ] ||
	die "--cpus 1 is not the uniprocessor net"
# No balancing, no I/O: CPU 0 keeps ceil(#C / P) CPU-bound tasks.
got=$(mean --cpus 2 --cpu-bound 5 --io-bound 0 --balance-per-s 0)
python3 -c "import sys; g = $got; w = (3 + 1) / 41600.0; sys.exit(abs(g - w) > 1e-14 * w)" ||
	die "pinned closed form: $got"

for bad in "--cpus 0" "--cpus 65" "--cpus 2 --cpu-bound 1.5" "--cpus 2 --table" \
	"--cpus 2 --load-independent" "--cpus 2 --mu-net-full 10" "--cpus 2 --balance-per-s -1"; do
	"$CTL" model $bad >/dev/null 2>"$T/err"
	[ $? -eq 2 ] || die "'$bad' did not exit 2"
	grep -q -- '--cpus\|--balance-per-s' "$T/err" || die "'$bad': message names no option: $(cat "$T/err")"
done
echo "ok: bad --cpus combinations exit 2"

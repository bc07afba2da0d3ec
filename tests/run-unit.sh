#!/usr/bin/env bash
# Run each cmocka test binary given on the command line; summarise; fail if any fails.
set -u
fail=0; n=0; failed=()
for t in "$@"; do
	n=$((n + 1))
	if "$t"; then :; else failed+=("$(basename "$t")"); fail=1; fi
done
if [ $fail -ne 0 ]; then
	echo "unit: ${#failed[@]} of $n test programs FAILED: ${failed[*]}"
	exit 1
fi
echo "unit: all $n test programs passed"

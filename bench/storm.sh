#!/usr/bin/env bash
# rxbneck against Storm on the same exported chains (bench/storm_compare.py).
# Storm's Python bindings come from PyPI into a virtual environment under the
# build directory, made on the first run; without network access or a wheel
# for this Python the comparison is skipped with a message, not failed.
set -u
: "${RXB_BUILD:?run from bench/run.sh (make bench)}"
: "${RXB_SRC:=$(pwd)}"
venv=$RXB_BUILD/storm-venv
py=$venv/bin/python
sys_python=/usr/bin/python3
[ -x "$sys_python" ] || sys_python=python3

if ! "$py" -c 'import stormpy' 2>/dev/null; then
	echo "storm: installing stormpy from PyPI into $venv"
	rm -rf "$venv"
	if ! "$sys_python" -m venv "$venv" ||
	   ! "$py" -m pip install --quiet stormpy; then
		echo "storm: SKIPPED: could not install stormpy into $venv" \
		     "(needs python3-venv and PyPI access); no Storm comparison in this run"
		exit 0
	fi
fi
exec "$py" "$RXB_SRC/bench/storm_compare.py" --build "$RXB_BUILD"

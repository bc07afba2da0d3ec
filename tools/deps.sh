#!/usr/bin/env bash
# Install the Debian packages rxbneck needs to build, test and run, when missing.
# Idempotent and quick when everything is present; needs root only to install.
set -euo pipefail

PKGS=(
	# build
	make gcc clang llvm pkg-config libc6-dev
	libbpf-dev bpftool libelf-dev zlib1g-dev
	libnl-3-dev libnl-genl-3-dev libnl-route-3-dev
	liblapacke-dev liblapack-dev libblas-dev
	libiniparser-dev libjson-c-dev
	# RBUDP tools: SHA-256, UMAC, HMAC, HKDF
	nettle-dev
	# the metrics endpoint's HTTP server
	libmicrohttpd-dev
	# tests, fuzzing, benchmarks
	libcmocka-dev libclang-rt-14-dev
	iproute2 ethtool procps util-linux
	stress-ng fio iperf3
	# perf sched: the second tool measure_windows_perf times windows with
	linux-perf
	# a real Prometheus (and promtool) scrapes the metrics endpoint in the tests
	prometheus
	# rxbneck-shape's iperf3 test: iperf3's datagrams to the test's receiver
	nftables
	python3 python3-matplotlib
	# bench/storm.sh: Storm's Python bindings (stormpy, PyPI) in a venv
	python3-venv
	# systemd-analyze for the unit's security score; man for the pages
	systemd man-db
)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install packages: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# The metrics endpoint ([metrics], docs/metrics.md) scraped by a real
# Prometheus (Debian's prometheus package) on loopback, with a temporary
# configuration and storage directory, while a watched flow carries UDP
# traffic into a receiver too slow for it (drops).
#
# Checked, through Prometheus's HTTP API (/api/v1/query):
#  - up{job="rxbneck"} is 1;
#  - at every scraped epoch that `rxbneckctl status --json` was also seen
#    at (matched by rxbneck_epoch = epoch.seq), the advised-rate series x 8
#    equals status's flows[].rate.rate_bps;
#  - between two scrapes of consecutive epochs E-1, E, the drop counters
#    (summed over reasons) grew by status's flows[].traffic.drops at E,
#    with drops seen (> 0) in some of them;
#  - the host-bound query of docs/metrics.md evaluates.
# And: `promtool check metrics` finds nothing in a scrape; the alerting
# rules of docs/metrics.md pass `promtool check rules` and do what they
# say under `promtool test rules` (as does the host-bound query), on
# synthetic series.
. "$(dirname "$0")/daemon_lib.inc"

command -v prometheus >/dev/null && command -v promtool >/dev/null ||
	skip "prometheus not installed (tools/deps.sh installs it)"
MPORT=$(free_port)
PPORT=$(free_port)
P=$(free_port)
SECS=${METRICS_SECONDS:-12}

# The documents' blocks, as files.
doc_block() {
	sed -n "/<!-- BEGIN $1 -->/,/<!-- END $1 -->/p" "$S/docs/metrics.md" | sed '1,2d;$d' | sed '$d'
}
doc_block rules.yml > "$T/rules.yml"
doc_block host-bound.promql > "$T/host-bound.promql"
[ -s "$T/rules.yml" ] && [ -s "$T/host-bound.promql" ] || die "docs/metrics.md: rules or query block missing"
promtool check rules "$T/rules.yml" > "$T/check-rules.txt" 2>&1 ||
	die "promtool check rules: $(cat "$T/check-rules.txt")"
python3 "$(dirname "$0")/metrics_rules_test.py" "$T/host-bound.promql" > "$T/rules-test.json" ||
	die "writing the rules test"
(cd "$T" && promtool test rules rules-test.json) > "$T/test-rules.txt" 2>&1 ||
	die "promtool test rules: $(cat "$T/test-rules.txt")"
log "docs/metrics.md: rules pass promtool check rules and test rules"

write_conf "$T/d.conf" "[measure] interval_ms = 1000" "[measure] watch_ports = $P" \
	"[measure] net_probe_every = 1"
printf '[metrics]\nenabled = yes\nlisten = 127.0.0.1:%s\n' "$MPORT" >> "$T/d.conf"
start_daemon "$T/d.conf"

# A receiver that reads at most a few thousand datagrams a second, and
# 20 000 a second sent to it.
bg python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True:
    s.recv(2048)
    time.sleep(0.0002)' "$P"
sleep 0.3
bg python3 "$(dirname "$0")/udp_tx.py" 127.0.0.1 "$P"

cat > "$T/prom.yml" <<EOF
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: rxbneck
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
bg prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn 2>"$T/prom.log"
for _ in $(seq 100); do
	python3 -c 'import sys, urllib.request
urllib.request.urlopen("http://127.0.0.1:%s/-/ready" % sys.argv[1], timeout=1)' "$PPORT" 2>/dev/null && break
	sleep 0.1
done
log "prometheus up on 127.0.0.1:$PPORT; scraping 127.0.0.1:$MPORT for ${SECS}s"

# status --json every 0.2 s meanwhile: epoch -> the flow's rate and drops.
end=$((SECONDS + SECS))
: > "$T/st.jsonl"
while [ $SECONDS -lt $end ]; do
	ctl status --json >> "$T/st.jsonl" || die "status"
	sleep 0.2
done
sleep 1		# the last epochs' scrapes

python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1]).read().decode())' \
	"$MPORT" > "$T/scrape.txt" || die "GET /metrics"
promtool check metrics < "$T/scrape.txt" > "$T/check-metrics.txt" 2>&1 ||
	die "promtool check metrics: $(cat "$T/check-metrics.txt")"
[ -s "$T/check-metrics.txt" ] && die "promtool check metrics: $(cat "$T/check-metrics.txt")"
log "promtool check metrics: no problem in a scrape of $(wc -l < "$T/scrape.txt") lines"

python3 - "$PPORT" "$P" "$T/st.jsonl" "$T/host-bound.promql" <<'PY' || die "Prometheus against status"
import json, sys, urllib.parse, urllib.request
pport, port, st_file, hb_file = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def query(q):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (pport, urllib.parse.urlencode({"query": q}))
    r = json.load(urllib.request.urlopen(url, timeout=5))
    assert r["status"] == "success", (q, r)
    return r["data"]["result"]

up = query('up{job="rxbneck"}')
assert len(up) == 1 and up[0]["value"][1] == "1", up
# Raw samples of the window, by scrape time.
def samples(q):
    out = {}
    for series in query(q + "[60s]"):
        for t, v in series["values"]:
            out.setdefault(t, []).append((series["metric"], float(v)))
    return out
epochs = {t: v[0][1] for t, v in samples('rxbneck_epoch{job="rxbneck"}').items()}
rates = {t: v[0][1] for t, v in
         samples('rxbneck_flow_advised_rate_bytes_per_second{port="%s"}' % port).items()}
drops = {t: sum(x[1] for x in v) for t, v in
         samples('rxbneck_flow_dropped_packets_total{port="%s"}' % port).items()}
reasons = sorted({m["reason"] for v in samples(
    'rxbneck_flow_dropped_packets_total{port="%s"}' % port).values() for m, _ in v})

status = {}
for line in open(st_file):
    d = json.loads(line)
    if not d["epoch"]:
        continue
    f = [f for f in d["flows"] if f["port"] == int(port)][0]
    status[d["epoch"]["seq"]] = (f["rate"]["rate_bps"] if f["rate"] else None,
                                 f["traffic"]["drops"] or 0, f["state"])

# The advised rate at each epoch both saw.
matched = 0
for t, e in sorted(epochs.items()):
    if e in status and t in rates and status[e][0] is not None:
        assert rates[t] * 8 == status[e][0], (e, rates[t] * 8, status[e])
        matched += 1
# Drop counters: the growth between consecutive epochs is status's drops.
by_epoch = {}
for t, e in sorted(epochs.items()):
    by_epoch.setdefault(int(e), drops.get(t, 0.0))
pairs = nonzero = 0
for e in sorted(by_epoch):
    if e - 1 in by_epoch and e in status:
        grew = by_epoch[e] - by_epoch[e - 1]
        assert grew == status[e][1], ("epoch", e, "counter grew", grew, "status", status[e][1])
        pairs += 1
        nonzero += grew > 0
print("scrapes %d over epochs %d..%d; rate matched at %d scrapes; drops matched over %d "
      "epoch pairs (%d with drops); reasons %s; states %s" % (
      len(epochs), min(by_epoch), max(by_epoch), matched, pairs, nonzero, reasons,
      sorted({s[2] for s in status.values()})))
assert matched >= 5, "too few scrapes matched status by epoch"
assert pairs >= 4 and nonzero >= 2, "too few epoch pairs with drops"
hb = query(open(hb_file).read())
print("host-bound query: %d receivers" % len(hb))
PY
log "PASS"

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A `promtool test rules` file (JSON is YAML) for docs/metrics.md's alerting
rules (rules.yml, beside it) and its host-bound query (the file named by
argv[1]), on synthetic series whose answers are known:

  - RxbneckDegraded: receiver a degraded throughout fires at 5 m, not at
    4 m; receiver b, healthy one minute in four, never;
  - RxbneckPredictedLossHigh: 5 % predicted loss at confidence 0.9 fires
    after 2 m; the same at confidence 0.2, or 0.1 % loss, never;
  - host-bound: hb (advised below the line rate, the socket stage the
    slowest, modelled) is listed; nb (the NIC stage the slowest), uc (the
    advised rate is the line rate) and pr (provisional) are not.

    metrics_rules_test.py HOST_BOUND_QUERY_FILE > rules-test.json
"""
import json
import sys

J = 'job="rxbneck"'


def s(name, inst, values, **labels):
    lab = ",".join(['instance="%s"' % inst, J] + ['%s="%s"' % kv for kv in labels.items()])
    return {"series": "%s{%s}" % (name, lab), "values": values}


def flow(inst, advised, line, sock, nic, model):
    p = {"port": "5001"}
    return [s("rxbneck_flow_advised_rate_bytes_per_second", inst, "%gx10" % advised, **p),
            s("rxbneck_flow_line_rate_bytes_per_second", inst, "%gx10" % line, **p),
            s("rxbneck_flow_stage_capacity_bytes_per_second", inst, "%gx10" % sock,
              stage="socket", **p),
            s("rxbneck_flow_stage_capacity_bytes_per_second", inst, "%gx10" % nic,
              stage="nic", **p),
            s("rxbneck_flow_state", inst, "%dx10" % model, state="model", **p)]


query = open(sys.argv[1]).read()
series = [
    s("rxbneck_degraded", "a", "1x10"),
    s("rxbneck_degraded", "b", "1 1 1 0 1 1 1 0 1 1 1"),
    s("rxbneck_flow_predicted_loss_ratio", "a", "0.05x10", port="5001"),
    s("rxbneck_flow_confidence_ratio", "a", "0.9x10", port="5001"),
    s("rxbneck_flow_predicted_loss_ratio", "b", "0.05x10", port="5001"),
    s("rxbneck_flow_confidence_ratio", "b", "0.2x10", port="5001"),
    s("rxbneck_flow_predicted_loss_ratio", "c", "0.001x10", port="5001"),
    s("rxbneck_flow_confidence_ratio", "c", "1x10", port="5001"),
]
series += flow("hb", 1e8, 1.25e9, 1e8, 1e9, 1)
series += flow("nb", 1e8, 1.25e9, 2e9, 1e8, 1)
series += flow("uc", 1.25e9, 1.25e9, 2e9, 1.5e9, 1)
series += flow("pr", 1e8, 1.25e9, 1e8, 1e9, 0)

degraded = {
    "exp_labels": {"severity": "warning", "instance": "a", "job": "rxbneck"},
    "exp_annotations": {
        "summary": "rxbneckd on a is degraded",
        "description": "rxbneck_degraded_reason says why; `rxbneckctl status` on the host "
                       "gives the details.",
    },
}
loss = {
    "exp_labels": {"severity": "warning", "instance": "a", "job": "rxbneck", "port": "5001"},
    "exp_annotations": {"summary": "a port 5001: predicted loss 5% at the advised rate"},
}
test = {
    "rule_files": ["rules.yml"],
    "evaluation_interval": "1m",
    "tests": [{
        "interval": "1m",
        "input_series": series,
        "alert_rule_test": [
            {"eval_time": "4m", "alertname": "RxbneckDegraded", "exp_alerts": []},
            {"eval_time": "5m", "alertname": "RxbneckDegraded", "exp_alerts": [degraded]},
            {"eval_time": "1m", "alertname": "RxbneckPredictedLossHigh", "exp_alerts": []},
            {"eval_time": "3m", "alertname": "RxbneckPredictedLossHigh", "exp_alerts": [loss]},
        ],
        "promql_expr_test": [
            {"expr": query, "eval_time": "2m",
             "exp_samples": [{"labels": '{instance="hb"}', "value": 1}]},
        ],
    }],
}
json.dump(test, sys.stdout, indent=1)

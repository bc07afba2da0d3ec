#!/usr/bin/env bash
# daemon_rate_hogs.sh with the per-packet probes attached one epoch in 4
# ([measure] net_probe_every = 4, the setting that cuts their overhead):
# the receive-path costs are learned in the sampled epochs only, #C in
# every epoch, so the pushed rate must still drop within two epochs of two
# CPU hogs starting on the receiver's CPU.
NET_PROBE_EVERY=4 exec bash "$(dirname "$0")/daemon_rate_hogs.sh" "$@"

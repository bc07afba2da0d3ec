#!/usr/bin/env bash
# measure_sampled.sh with the per-packet programs in every epoch and stage
# A's (NET_RX softirq entry/exit, napi_poll) in one epoch in 3 (what the
# daemon does while it learns, with 4): the socket counts stay exact in
# every epoch, the NAPI counts are there in exactly the epochs 1, 4, 7, ...
NET_PROBE_EVERY=1 STAGE_A_EVERY=3 exec bash "$(dirname "$0")/measure_sampled.sh" "$@"

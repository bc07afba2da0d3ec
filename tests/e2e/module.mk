# tests/e2e: the end-to-end experiment (docs/e2e.md): RBUDP transfer time
# against sending rate with 0..3 CPU hogs on the receiver's CPU, rxbneckd's
# chosen rate (--follow), TCP, and RBUDP vs RBUDP+. Root; long (print
# progress). Results go to tests/e2e/out/<date>/ (or E2E_OUT).
#
#   make e2e                          the full experiment
#   make e2e-pause                    RBUDP+ vs RBUDP with seed 004's receiver
#   make e2e E2E_ARGS="-k '0 2' -n 5"  options of tests/e2e/run.sh
E2E_ARGS ?=
E2E_OUT  ?=

.PHONY: e2e
e2e: all
	bash tests/e2e/run.sh -b $(O) $(if $(E2E_OUT),-o $(E2E_OUT)) $(E2E_ARGS)

# RBUDP+ against RBUDP (seed 004 Table 1) with seed 004's receiver: one
# that busy-polls, so it is only ever preempted, on a 512 KiB buffer that
# cannot hide an off-CPU window (docs/e2e.md §8 H, I). The default receiver
# gets no PAUSE: its 8 MiB queue absorbs every window the predictor foresees.
.PHONY: e2e-pause
e2e-pause: all
	E_RECV_ARGS=--busy-poll E_RCVBUF=256Ki bash tests/e2e/run.sh -b $(O) \
		$(if $(E2E_OUT),-o $(E2E_OUT)) -k "" -t 0 -p 10 -K "2 3" $(E2E_ARGS)

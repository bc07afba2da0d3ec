# tests/e2e: the end-to-end experiment (docs/e2e.md): RBUDP transfer time
# against sending rate with 0..3 CPU hogs on the receiver's CPU, rxbneckd's
# chosen rate (--follow), TCP, and RBUDP vs RBUDP+. Root; long (print
# progress). Results go to tests/e2e/out/<date>/ (or E2E_OUT).
#
#   make e2e                          the full experiment
#   make e2e-pause                    RBUDP+ vs RBUDP with a busy-polling receiver
#   make e2e-between                  --follow vs --follow --no-pause where no PAUSE comes
#   make e2e E2E_ARGS="-k '0 2' -n 5"  options of tests/e2e/run.sh
E2E_ARGS ?=
E2E_OUT  ?=

.PHONY: e2e
e2e: all
	bash tests/e2e/run.sh -b $(O) $(if $(E2E_OUT),-o $(E2E_OUT)) $(E2E_ARGS)

# RBUDP+ against RBUDP (as Datta et al., Table 1, docs/references.md) with
# the receiver they assume: one that busy-polls, so it is only ever
# preempted, on a 512 KiB buffer that cannot hide an off-CPU window
# (docs/e2e.md §4, claim 4). The default receiver gets no PAUSE: its 8 MiB
# queue absorbs every window the predictor foresees.
.PHONY: e2e-pause
e2e-pause: all
	E_RECV_ARGS=--busy-poll E_RCVBUF=256Ki bash tests/e2e/run.sh -b $(O) \
		$(if $(E2E_OUT),-o $(E2E_OUT)) -k "" -t 0 -p 10 -K "2 3" $(E2E_ARGS)

# The parallel-stream advisor against the measured throughput-vs-n curve
# (docs/streams.md §6): make e2e-streams E2E_ARGS="-k '0 2' -n 3".
.PHONY: e2e-streams
e2e-streams: all
	bash tests/e2e/streams.sh -b $(O) $(if $(E2E_OUT),-o $(E2E_OUT)) $(E2E_ARGS)

# rxbneck-shape: the PAUSE measurement and the experiment (docs/shape.md §5, §6).
.PHONY: e2e-shape
e2e-shape: all
	out=$(if $(E2E_OUT),$(E2E_OUT),tests/e2e/out/shape-$$(date +%Y%m%d-%H%M%S)); \
	bash tests/e2e/shape_pause.sh -b $(O) -o $$out && \
	bash tests/e2e/shape.sh -b $(O) -o $$out $(E2E_ARGS)

# One command that shows what following rxbneckd does (README.md's quick
# start): a blast at the top rate and a --follow transfer over a delayed
# path with 2 CPU hogs on the receiver's CPU. Root, ~1 minute.
#   make demo DEMO_ARGS="-s 20M -d 10"   the short form CI runs
DEMO_ARGS ?=
.PHONY: demo
demo: all
	bash tests/e2e/demo.sh -b $(O) $(DEMO_ARGS)

# The receive-buffer experiment (docs/buffer.md §5): a static 1 MiB buffer,
# RRDA and the model-sized buffer against 1 to 35 fixed-rate senders with
# 0 and 2 CPU hogs on the receiver's CPU. Root; about 15 minutes.
#   make e2e-buffer                          the whole experiment
#   make e2e-buffer E2E_ARGS="-n 1 -N '5 35'"  options of tests/e2e/buffer.sh
BINS += $(O)/rxbneck-bufload
$(O)/rxbneck-bufload: $(O)/tests/e2e/bufload.o
	$(call link_prog,)

.PHONY: e2e-buffer
e2e-buffer: all
	bash tests/e2e/buffer.sh -b $(O) $(if $(E2E_OUT),-o $(E2E_OUT)) $(E2E_ARGS)

# The rate between pauses only with a PAUSE schedule (docs/e2e.md §5.6):
# with the default receiver, which gets no PAUSE, under a busy loop and
# I/O-bound readers, --follow must lose as --follow --no-pause does.
.PHONY: e2e-between
e2e-between: all
	bash tests/e2e/pause_ab.sh -b $(O) -o $(or $(E2E_OUT),tests/e2e/out/between-$(shell date +%Y%m%d-%H%M%S)) \
		$(E2E_ARGS)

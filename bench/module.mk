# bench/: one benchmark program per bench/bench_*.c (scripts bench/*.sh run too).
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCHES += $(BENCH_SRCS:bench/%.c=$(O)/bench/%)
$(O)/bench/%: $(O)/bench/%.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# bench/overhead_nop: do-nothing programs on given tracepoints, the
# reference that bench/overhead.sh's cost per event is measured against.
# A helper of that script, not a benchmark of its own: built with `all`.
BINS += $(O)/bench/overhead_nop
$(O)/bench/overhead_nop: $(O)/bench/overhead_nop.o
	$(call link_prog,)

# bench/: one benchmark program per bench/bench_*.c (scripts bench/*.sh run too).
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCHES += $(BENCH_SRCS:bench/%.c=$(O)/bench/%)
$(O)/bench/%: $(O)/bench/%.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,)

# solver/: the pure model library (no I/O, no globals). Every solver/*.c is in it.
SOLVER_SRCS := $(wildcard solver/*.c)
$(O)/libsolver.a: $(SOLVER_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
# Archives are prepended: dependents end up first on the link line.
LIBS := $(O)/libsolver.a $(LIBS)

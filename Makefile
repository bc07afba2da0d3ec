# rxbneck — top-level build.
#
# Every directory contributes a fragment `<dir>/module.mk` that appends to the
# variables below and adds its own rules; this file only holds what is common.
# Objects go to $(O): build/ normally, build/san/ with SAN=1 (ASan + UBSan).
#
#   make              build libraries, binaries and BPF objects
#   make check        install deps, then the whole suite (what CI runs)
#   make check-unit   cmocka unit tests only (SAN=1 for the sanitizer build)
#   make run          install deps, build, start rxbneckd in the foreground
#   make bench        benchmarks (print ratios against in-run references)
#   make fuzz         libFuzzer targets for FUZZ_SECONDS each
#   make e2e          the end-to-end experiment (docs/e2e.md; root, long)
#   make e2e-pause    its RBUDP+ vs RBUDP part with a busy-polling receiver
#   make e2e-buffer   receive-buffer adaptation against a static buffer (docs/buffer.md)
#   make install      install under $(DESTDIR)$(PREFIX)

SAN      ?= 0
V        ?= 0
PREFIX   ?= /usr/local
DESTDIR  ?=
FUZZ_SECONDS ?= 30

ifeq ($(SAN),1)
O := build/san
else
O := build
endif

CC      := gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
AR      ?= ar

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

CPPFLAGS := -D_GNU_SOURCE -DRXB_VERSION='"$(VERSION)"' -I. -Iinclude -I$(O)/gen
CFLAGS   := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC
LDFLAGS  :=
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif

# System libraries every internal archive may need; the linker drops the unused.
SYSLIBS := -lbpf -lelf -lz -lnl-genl-3 -lnl-route-3 -lnl-3 -llapacke -llapack -lblas \
           -lm -lpthread
CPPFLAGS += -I/usr/include/libnl3

ifeq ($(V),1)
Q :=
else
Q := @
endif

# `make clean all -jN` in one invocation: under -j, make runs `clean` beside the
# other goals, and its `rm -rf` deletes what they are building (a skeleton header
# vanishes under an object that includes it; stale .d files were read before the
# clean). With `clean` among several goals, run the goals one after another, each
# in a sub-make of its own (which shares the jobserver, so each still uses -jN).
ifneq ($(and $(filter clean,$(MAKECMDGOALS)),$(filter-out clean,$(MAKECMDGOALS))),)

.PHONY: $(MAKECMDGOALS)
$(firstword $(MAKECMDGOALS)):
	+@for goal in $(MAKECMDGOALS); do $(MAKE) --no-print-directory $$goal || exit 1; done
$(wordlist 2,$(words $(MAKECMDGOALS)),$(MAKECMDGOALS)): $(firstword $(MAKECMDGOALS)) ; @:

else # the build itself

# Filled by module.mk fragments.
LIBS        :=   # internal static archives, in link order (dependents first)
LIBS_TAIL   :=   # archives every other one may use (libcommon), linked last
BINS        :=   # programs to build by `make all`
UNIT_TESTS  :=   # cmocka test binaries
BENCHES     :=   # benchmark binaries
FUZZERS     :=   # libFuzzer binaries (built with clang, always under build/fuzz)
GENERATED   :=   # generated headers that objects depend on

.SECONDARY:

.PHONY: all
all: everything

include common/module.mk
-include solver/module.mk
-include bpf/module.mk
-include proto/module.mk
-include client/module.mk
-include daemon/module.mk
-include ctl/module.mk
-include tools/module.mk
-include tests/module.mk
-include tests/e2e/module.mk
-include bench/module.mk
-include systemd/module.mk
-include man/module.mk

.PHONY: everything
everything: $(BINS) $(UNIT_TESTS)

# Every program links every internal archive (link_prog). $(LIBS) is complete
# only after all fragments are read, so the dependency is declared here, not
# in the fragments, whose prerequisite lists are expanded as they are read.
$(BINS) $(UNIT_TESTS) $(BENCHES): $(LIBS) $(LIBS_TAIL)

$(O)/%.o: %.c | $(GENERATED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Link a program from its objects plus every internal archive.
define link_prog
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIBS) $(LIBS_TAIL) $(SYSLIBS) $(1)
endef

.PHONY: deps
deps:
	bash tools/deps.sh

# The whole suite, as CI runs it. Sub-makes keep the steps strictly ordered.
.PHONY: check
check:
	bash tools/deps.sh
	$(MAKE) all
	$(MAKE) check-unit
	$(MAKE) SAN=1 check-unit
	$(MAKE) check-integration
	$(MAKE) fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

.PHONY: check-unit
check-unit: $(UNIT_TESTS)
	@bash tests/run-unit.sh $(UNIT_TESTS)

.PHONY: check-integration
check-integration: all
	@bash tests/run-integration.sh $(O)

.PHONY: bench
bench: $(BENCHES)
	@bash bench/run.sh $(O) $(BENCHES)

.PHONY: fuzz
fuzz: $(FUZZERS)
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

.PHONY: run
run:
	bash tools/deps.sh
	$(MAKE) all
	$(O)/rxbneckd -f -c conf/rxbneckd.conf

# Modules add their own `install::` rules; this one comes first.
.PHONY: install
install:: all

.PHONY: clean
clean:
	rm -rf build

-include $(shell find $(O) -name '*.d' 2>/dev/null)

endif # the build itself

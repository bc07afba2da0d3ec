# bpf/: CO-RE programs (x.bpf.c), their skeletons, and the user-space
# loaders/readers (x.c) that go into libprobe.a. x.h holds the records both
# sides exchange.
#
# vmlinux.h is dumped from the running kernel's BTF at build time; each
# x.bpf.c becomes $(O)/bpf/x.bpf.o and $(O)/gen/x.skel.h (struct rxb_x).

VMLINUX_BTF  ?= /sys/kernel/btf/vmlinux
LLVM_STRIP   ?= llvm-strip
BPF_ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
                   -e 's/ppc64le/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')
BPF_CFLAGS   := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
                -I$(O)/gen -I.

BPF_PROGS    := $(wildcard bpf/*.bpf.c)
BPF_SKELS    := $(BPF_PROGS:bpf/%.bpf.c=$(O)/gen/%.skel.h)
PROBE_SRCS   := $(filter-out %.bpf.c,$(wildcard bpf/*.c))

GENERATED += $(O)/gen/vmlinux.h $(BPF_SKELS)

$(O)/gen/vmlinux.h:
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BTF     $@")
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(O)/bpf/%.bpf.o: bpf/%.bpf.c bpf/%.h $(O)/gen/vmlinux.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BPF     $@")
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $@.tmp \
		&& $(LLVM_STRIP) -g $@.tmp -o $@ && rm -f $@.tmp

$(O)/gen/%.skel.h: $(O)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GENSKEL $@")
	$(Q)$(BPFTOOL) gen skeleton $< name rxb_$* > $@.tmp && mv $@.tmp $@

$(O)/libprobe.a: $(PROBE_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The daemon's collectors use the readers: libprobe comes after libdaemon.
LIBS := $(O)/libprobe.a $(LIBS)

# tests/: cmocka unit tests (one binary per tests/unit/test_*.c, linked with
# every internal archive) and libFuzzer targets.
#
# A fuzzer tests/fuzz/fuzz_<name>.c is declared by its owning module with
#   FUZZERS += $(O)/fuzz/fuzz_<name>
#   FUZZ_SRCS_fuzz_<name> := <the .c files under test>
#   FUZZ_LIBS_fuzz_<name> := <extra -l flags, if any>
# in a fragment tests/fuzz/<name>.mk, so that the code under test is compiled
# with coverage instrumentation. Seed inputs go in tests/fuzz/corpus/fuzz_<name>/.

UNIT_TEST_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_TESTS += $(UNIT_TEST_SRCS:tests/unit/%.c=$(O)/tests/unit/%)

$(O)/tests/unit/%: $(O)/tests/unit/%.o $(LIBS) $(LIBS_TAIL)
	$(call link_prog,-lcmocka)

-include $(wildcard tests/fuzz/*.mk)

FUZZ_CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra -Werror \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.SECONDEXPANSION:
build/fuzz/%: tests/fuzz/%.c $$(FUZZ_SRCS_$$*) | $(GENERATED)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CLANG) $(CPPFLAGS) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) $(FUZZ_LIBS_$*) -lm

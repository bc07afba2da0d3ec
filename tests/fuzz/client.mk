# Fuzz target for librxbneck's input from the daemon (owned by client/;
# tests/fuzz/fuzz_client.c includes client/client.c itself, for its static drop()).
FUZZERS += build/fuzz/fuzz_client
FUZZ_SRCS_fuzz_client := client/client_input.c client/pause.c proto/codec.c
FUZZ_LIBS_fuzz_client := -lpthread

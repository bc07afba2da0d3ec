# Fuzz target for the metrics endpoint's request path (owned by
# daemon/serve/metricsrv): libmicrohttpd parses the requests; what is fuzzed
# is the whole path as the daemon runs it, over loopback TCP.
FUZZERS += build/fuzz/fuzz_metricsrv
FUZZ_SRCS_fuzz_metricsrv := daemon/serve/metricsrv.c daemon/serve/listen.c daemon/serve/promtext.c \
                            daemon/serve/sendsrv_cidr.c \
                            common/parse.c common/log.c common/strbuf.c common/util.c
FUZZ_LIBS_fuzz_metricsrv := -lmicrohttpd

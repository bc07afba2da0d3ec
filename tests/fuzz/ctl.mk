# Fuzz target for rxbneckd's control requests and state files (lines, whole)
# (owned by daemon/serve/ctlsrv and daemon/model/state).
FUZZERS += build/fuzz/fuzz_ctl
FUZZ_SRCS_fuzz_ctl := daemon/serve/ctlsrv.c daemon/model/state.c daemon/model/value.c daemon/model/learn.c \
                      daemon/model/busy.c daemon/model/cost.c daemon/model/arrive.c daemon/model/inputs.c \
                      daemon/model/drain.c daemon/model/capacity.c \
                      solver/ewma.c solver/lsq.c solver/tagged.c solver/ctmc.c solver/ctmc_band.c \
                      solver/ctmc_dist.c solver/ctmc_graph.c solver/ctmc_unif.c solver/srn.c \
                      solver/offwin.c solver/offwin_piece.c solver/qphase.c \
                      common/json.c common/parse.c common/log.c common/strbuf.c common/util.c
FUZZ_LIBS_fuzz_ctl := -llapacke -llapack -lblas

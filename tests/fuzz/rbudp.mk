# Fuzz targets for the RBUDP tools: the control-frame and missing-set
# decoders (fuzz_rbudp), and the receiver's datagram path with the
# version 3 handshake decoders, datagram tokens and tags (fuzz_rbudp_dgram).
FUZZERS += build/fuzz/fuzz_rbudp build/fuzz/fuzz_rbudp_dgram
FUZZ_SRCS_fuzz_rbudp := tools/rbudp/wire.c tools/rbudp/bitmap.c
FUZZ_SRCS_fuzz_rbudp_dgram := tools/rbudp/wire.c tools/rbudp/bitmap.c tools/rbudp/auth.c \
	tools/rbudp/dgram.c common/util.c
FUZZ_LIBS_fuzz_rbudp_dgram := -lnettle

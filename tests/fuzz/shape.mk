# Fuzz targets for rxbneck-shape's parsers (tools/shape): its configuration
# file (INI, through iniparser) and its state records.
FUZZERS += build/fuzz/fuzz_shape_conf build/fuzz/fuzz_shape_state
FUZZ_SRCS_fuzz_shape_conf := tools/shape/conf.c tools/shape/util.c common/parse.c common/log.c common/util.c
FUZZ_LIBS_fuzz_shape_conf := -liniparser
FUZZ_SRCS_fuzz_shape_state := tools/shape/state.c tools/shape/util.c common/parse.c common/util.c

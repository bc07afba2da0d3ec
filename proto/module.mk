# proto/: the sender control protocol's frame codec, shared by daemon and client.
PROTO_SRCS := $(wildcard proto/*.c)
$(O)/libproto.a: $(PROTO_SRCS:%.c=$(O)/%.o)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && $(AR) rcs $@ $^
LIBS := $(O)/libproto.a $(LIBS)

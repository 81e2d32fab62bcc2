# The build of a Capstan plugin written in C, included by the plugin's
# Makefile after it sets:
#   PLUGIN   the component's name: $(PLUGIN).wasm
#   WORLD    admission (default), authenticator, authorizer, strategy, converter
#   SOURCES  the plugin's C files
#   TESTS    its unit tests (a main() using capstan/check.h)
# Targets: `make` (the component), `make test` (unit tests, natively, against
# the fake host), `make clean`. Tools, each overridable on the command line:
#   WIT_BINDGEN  wit-bindgen 0.61.1 (`cargo install wit-bindgen-cli`)
#   WASM_CC      clang with wasi-libc (Debian: clang lld wasi-libc)
#   CAPSTAN      the capstan binary (`capstan plugin componentize`)
#   CC           the native compiler for `make test`

CAPSTAN_C_SDK := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
WIT_DIR := $(CAPSTAN_C_SDK)/../wit
WORLD ?= admission
BUILD ?= build
WIT_BINDGEN ?= wit-bindgen
WASM_CC ?= clang
CAPSTAN ?= capstan
CFLAGS_COMMON := -std=c11 -Wall -Wextra -Werror -I$(CAPSTAN_C_SDK)/include
WASM_CFLAGS ?= -O2
# 1 MiB of stack (wasm-ld's default is 64 KiB), a reactor (no main): the
# WASI preview1 reactor adapter turns it into a component.
WASM_LDFLAGS ?= -mexec-model=reactor -Wl,-z,stack-size=1048576 -Wl,--strip-debug
TEST_CFLAGS ?= -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all

# Each world's export and the name of its input (for error messages).
EXPORT_admission := review
EXPORT_authenticator := authenticate
EXPORT_authorizer := authorize
EXPORT_strategy := call
EXPORT_converter := convert
INPUT_authenticator := TokenReview
INPUT_authorizer := SubjectAccessReview
INPUT_strategy := strategy call
INPUT_converter := ConversionReview
ifeq ($(EXPORT_$(WORLD)),)
$(error WORLD must be one of admission, authenticator, authorizer, strategy, converter)
endif

SDK_SOURCES := $(addprefix $(CAPSTAN_C_SDK)/src/,memory.c json.c json_parse.c host.c object.c review.c response.c patch.c)
SDK_HEADERS := $(wildcard $(CAPSTAN_C_SDK)/include/capstan/*.h $(CAPSTAN_C_SDK)/src/*.h)
BINDINGS := $(BUILD)/bindings
GLUE_FLAGS := -DCAP_WORLD=$(WORLD) -DCAP_EXPORT=$(EXPORT_$(WORLD)) \
  -DCAP_BINDINGS='"$(WORLD).h"' -DCAP_INPUT='"$(INPUT_$(WORLD))"' -I$(BINDINGS)
WASM_OBJECTS := $(patsubst %.c,$(BUILD)/wasm/%.o,$(notdir $(SDK_SOURCES) $(SOURCES))) \
  $(BUILD)/wasm/wasm_glue.o $(BUILD)/wasm/bindings.o

.PHONY: all test clean
all: $(PLUGIN).wasm

# Bindings generated from the one WIT file, never copied.
$(BINDINGS)/$(WORLD).c $(BINDINGS)/$(WORLD).h $(BINDINGS)/$(WORLD)_component_type.o: $(WIT_DIR)/capstan.wit
	@mkdir -p $(BINDINGS)
	$(WIT_BINDGEN) c $(WIT_DIR) --world $(WORLD) --out-dir $(BINDINGS)

vpath %.c $(CAPSTAN_C_SDK)/src $(sort $(dir $(SOURCES)))

$(BUILD)/wasm/bindings.o: $(BINDINGS)/$(WORLD).c
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) -c $< -o $@

$(BUILD)/wasm/wasm_glue.o: wasm_glue.c $(BINDINGS)/$(WORLD).h $(SDK_HEADERS)
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(CFLAGS_COMMON) $(GLUE_FLAGS) -c $< -o $@

$(BUILD)/wasm/%.o: %.c $(SDK_HEADERS)
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(CFLAGS_COMMON) -c $< -o $@

$(BUILD)/$(PLUGIN).core.wasm: $(WASM_OBJECTS) $(BINDINGS)/$(WORLD)_component_type.o
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(WASM_LDFLAGS) $^ -o $@

$(PLUGIN).wasm: $(BUILD)/$(PLUGIN).core.wasm
	$(CAPSTAN) plugin componentize --module $< --world $(WORLD) -o $@

# Unit tests: the plugin and the SDK compiled natively with the fake host.
$(BUILD)/$(PLUGIN)-test: $(TESTS) $(SOURCES) $(SDK_SOURCES) $(CAPSTAN_C_SDK)/src/testing.c $(SDK_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(CFLAGS_COMMON) $(filter %.c,$^) -o $@ -lm

test: $(BUILD)/$(PLUGIN)-test
	$(BUILD)/$(PLUGIN)-test

clean:
	rm -rf $(BUILD) $(PLUGIN).wasm

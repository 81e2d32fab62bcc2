# The build of a Capstan plugin written in C, included by the plugin's
# Makefile after it sets:
#   PLUGIN   the component's name: $(PLUGIN).wasm
#   WORLD    admission (default), authenticator, authorizer, strategy, converter
#   SOURCES  the plugin's C files
#   TESTS    its unit tests (a main() using capstan/check.h)
# Targets: `make` (the component), `make test` (unit tests, natively, against
# the fake host), `make clean`. Tools, each overridable on the command line:
#   WIT_BINDGEN  wit-bindgen-cli 0.61.1, by default the one installed into its
#                own folder of the user cache (its version's, never
#                ~/.cargo/bin, so the Go SDK's wit-bindgen 0.63 cannot replace
#                it; WIT_BINDGEN_INSTALL below installs it). Taken from `make
#                WIT_BINDGEN=...` or the Makefile, not from the environment
#                (an exported WIT_BINDGEN is the Go SDK's).
#   WASM_CC      clang with wasi-libc (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)
#   CAPSTAN      the capstan binary (`capstan plugin componentize`)
#   CC           the native compiler for `make test`
# A missing or wrong tool stops the build with its name and how to get it.

CAPSTAN_C_SDK := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
WIT_DIR := $(CAPSTAN_C_SDK)/../wit
WORLD ?= admission
BUILD ?= build
# The wit-bindgen release whose C output this SDK is built and tested with,
# and where it lives: ${XDG_CACHE_HOME:-$HOME/.cache}/capstan/wit-bindgen-<version>.
WIT_BINDGEN_VERSION := 0.61.1
WIT_BINDGEN_ROOT := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/capstan/wit-bindgen-$(WIT_BINDGEN_VERSION)
WIT_BINDGEN_INSTALL := cargo install wit-bindgen-cli --locked --version $(WIT_BINDGEN_VERSION) \
  --no-default-features --features c --root $(WIT_BINDGEN_ROOT)
ifeq ($(origin WIT_BINDGEN),environment)
WIT_BINDGEN := $(WIT_BINDGEN_ROOT)/bin/wit-bindgen
endif
WIT_BINDGEN ?= $(WIT_BINDGEN_ROOT)/bin/wit-bindgen
WASM_CC ?= clang
CAPSTAN ?= capstan
# The repository this SDK is in (for the hint that builds capstan).
CAPSTAN_REPO := $(abspath $(CAPSTAN_C_SDK)/../..)
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

# Each tool is checked before the first compile (all that are missing named
# at once, each with the command that gets it), and again where it is used.
define check_wit_bindgen
found=$$('$(WIT_BINDGEN)' --version 2>/dev/null); \
if [ "$$found" != "wit-bindgen-cli $(WIT_BINDGEN_VERSION)" ]; then \
  if [ -z "$$found" ]; then \
    echo "capstan C SDK: wit-bindgen $(WIT_BINDGEN_VERSION) is missing (no $(WIT_BINDGEN))." >&2; \
  else \
    echo "capstan C SDK: $(WIT_BINDGEN) is $$found; this SDK needs wit-bindgen-cli $(WIT_BINDGEN_VERSION)." >&2; \
  fi; \
  echo "Install it (a few minutes, once; its own folder, beside any other wit-bindgen) with:" >&2; \
  echo "  $(WIT_BINDGEN_INSTALL)" >&2; \
  echo "or pass a wit-bindgen $(WIT_BINDGEN_VERSION): make WIT_BINDGEN=/path/to/wit-bindgen" >&2; \
  exit 1; \
fi
endef

define check_wasm_cc
if ! command -v '$(WASM_CC)' >/dev/null 2>&1; then \
  echo "capstan C SDK: $(WASM_CC) is missing (clang with wasi-libc compiles the component)." >&2; \
  echo "Install it (Debian 12) with:" >&2; \
  echo "  sudo apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32" >&2; \
  echo "or pass another clang: make WASM_CC=/path/to/clang" >&2; \
  exit 1; \
fi; \
libc=$$('$(WASM_CC)' --target=wasm32-wasi -print-file-name=libc.a); \
builtins=$$('$(WASM_CC)' --target=wasm32-wasi -print-libgcc-file-name); \
linker=$$('$(WASM_CC)' --target=wasm32-wasi -print-prog-name=wasm-ld); \
major=$$('$(WASM_CC)' -dumpversion | cut -d. -f1); \
missing=; packages=; \
if [ ! -e "$$libc" ]; then \
  missing="$$missing, wasi-libc (no libc.a for wasm32-wasi)"; packages="$$packages wasi-libc"; \
fi; \
if [ ! -e "$$builtins" ]; then \
  missing="$$missing, clang's wasm32 builtins (no $$builtins)"; packages="$$packages libclang-rt-$$major-dev-wasm32"; \
fi; \
if ! command -v "$$linker" >/dev/null 2>&1; then \
  missing="$$missing, the wasm-ld linker (no $$linker)"; packages="$$packages lld"; \
fi; \
if [ -n "$$missing" ]; then \
  echo "capstan C SDK: $(WASM_CC) cannot link for wasm32-wasi here; missing: $${missing#, }." >&2; \
  echo "Install (Debian 12) with:" >&2; \
  echo "  sudo apt-get install$$packages" >&2; \
  exit 1; \
fi
endef

define check_capstan
if ! '$(CAPSTAN)' plugin componentize --help >/dev/null 2>&1; then \
  if command -v '$(CAPSTAN)' >/dev/null 2>&1; then \
    echo "capstan C SDK: $(CAPSTAN) has no working \`plugin componentize\` (an older capstan?)." >&2; \
  else \
    echo "capstan C SDK: capstan is missing (no $(CAPSTAN) here or on PATH); its \`plugin componentize\` turns the core module into a component." >&2; \
  fi; \
  echo "Build it from this repository with:" >&2; \
  echo "  cargo build --release --bin capstan --manifest-path $(CAPSTAN_REPO)/Cargo.toml" >&2; \
  echo "and pass it: make CAPSTAN=$(CAPSTAN_REPO)/target/release/capstan (or put it on PATH)" >&2; \
  exit 1; \
fi
endef

# Bindings generated from the one WIT file, never copied.
$(BINDINGS)/$(WORLD).c $(BINDINGS)/$(WORLD).h $(BINDINGS)/$(WORLD)_component_type.o: $(WIT_DIR)/capstan.wit
	@$(check_wit_bindgen)
	@mkdir -p $(BINDINGS)
	$(WIT_BINDGEN) c $(WIT_DIR) --world $(WORLD) --out-dir $(BINDINGS)

# Every tool of the component's build (wit-bindgen; clang, wasi-libc, the
# builtins and wasm-ld; capstan), checked once per build folder, before the
# first compile.
$(BUILD)/wasm/.toolchain:
	@failed=0; \
	( $(check_wit_bindgen) ) || failed=1; \
	( $(check_wasm_cc) ) || failed=1; \
	( $(check_capstan) ) || failed=1; \
	[ $$failed = 0 ]
	@mkdir -p $(dir $@) && touch $@

vpath %.c $(CAPSTAN_C_SDK)/src $(sort $(dir $(SOURCES)))

$(BUILD)/wasm/bindings.o: $(BINDINGS)/$(WORLD).c | $(BUILD)/wasm/.toolchain
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) -c $< -o $@

$(BUILD)/wasm/wasm_glue.o: wasm_glue.c $(BINDINGS)/$(WORLD).h $(SDK_HEADERS) | $(BUILD)/wasm/.toolchain
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(CFLAGS_COMMON) $(GLUE_FLAGS) -c $< -o $@

$(BUILD)/wasm/%.o: %.c $(SDK_HEADERS) | $(BUILD)/wasm/.toolchain
	@mkdir -p $(dir $@)
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(CFLAGS_COMMON) -c $< -o $@

$(BUILD)/$(PLUGIN).core.wasm: $(WASM_OBJECTS) $(BINDINGS)/$(WORLD)_component_type.o
	$(WASM_CC) --target=wasm32-wasi $(WASM_CFLAGS) $(WASM_LDFLAGS) $^ -o $@

$(PLUGIN).wasm: $(BUILD)/$(PLUGIN).core.wasm
	@$(check_capstan)
	$(CAPSTAN) plugin componentize --module $< --world $(WORLD) -o $@

# Unit tests: the plugin and the SDK compiled natively with the fake host.
$(BUILD)/$(PLUGIN)-test: $(TESTS) $(SOURCES) $(SDK_SOURCES) $(CAPSTAN_C_SDK)/src/testing.c $(SDK_HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(CFLAGS_COMMON) $(filter %.c,$^) -o $@ -lm

test: $(BUILD)/$(PLUGIN)-test
	$(BUILD)/$(PLUGIN)-test

clean:
	rm -rf $(BUILD) $(PLUGIN).wasm

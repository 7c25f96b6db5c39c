# minductor — build, test, demo.
#   make            build ./minductor
#   make demo       build and run the pipeline on the bundled seed example
#   make check      build and run the TAP tests with prove (SANITIZE=1: ASan + UBSan build)
#   make bench      build and run the benchmarks (bench/)
#   make fuzz       build the libFuzzer targets (clang); make fuzz-run runs them (tests/README.md)
#   make check-long the long robustness run (1000 random graphs)
#   make check-opinfo  PyTorch's OpInfo samples: load + check + exec per case, with a table
# Sources are picked up by directory: core/*/ (the stage folders) trace/ viz/ form
# libminductor.a, repl/ the shell, every tests/*.c is one TAP test program linked with the
# test-only generators of tests/support/.

-include config.mk

ifeq ($(SANITIZE),1)
BUILD ?= build-san
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT = -O1 -g
else
BUILD ?= build
SAN =
OPT = -O2 -g
endif

CC ?= cc
WARN = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers
CFLAGS += -std=gnu11 $(OPT) $(WARN) $(SAN) -MMD -MP -I. -Icore \
          $(GV_CFLAGS) $(CJSON_CFLAGS) $(MD_CFLAGS) $(BLAS_CFLAGS) $(NUM_CFLAGS) $(OMP_FLAGS)
LDLIBS += $(GV_LIBS) $(CJSON_LIBS) $(MD_LIBS) $(BLAS_LIBS) $(NUM_LIBS) $(OMP_FLAGS) -ldl -lm -lpthread
LDFLAGS += $(SAN)

LIB_SRC  = $(wildcard core/*/*.c) $(wildcard trace/*.c) $(wildcard viz/*.c)
REPL_SRC = $(wildcard repl/*.c)
TEST_SRC = $(wildcard tests/*.c)
SUPPORT_SRC = $(wildcard tests/support/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
SUPPORT_OBJ = $(SUPPORT_SRC:%.c=$(BUILD)/%.o)
SUPPORT  = $(BUILD)/libtestsupport.a
REPL_OBJ = $(REPL_SRC:%.c=$(BUILD)/%.o)
TESTS    = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
LIB      = $(BUILD)/libminductor.a
BIN      = $(BUILD)/minductor

.PHONY: all minductor check check-long check-html demo bench fuzz fuzz-run clean distclean
all: minductor

config.mk: configure
	./configure

# ./minductor, the name the README and examples use: `make`, `make demo` and `make check` leave it.
# It is the plain build; a SANITIZE=1 build links it only when there is none, so that
# `make check && make check SANITIZE=1` leaves the plain shell there.
minductor: $(BIN)
ifeq ($(SANITIZE),1)
	@[ -x minductor ] || ln -sf $(BIN) minductor
else
	ln -sf $(BIN) minductor
endif

$(BUILD)/%.o: %.c config.mk
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/repl/%.o: CFLAGS += $(RL_CFLAGS)

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(SUPPORT): $(SUPPORT_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(REPL_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(REPL_OBJ) $(LIB) $(RL_LIBS) $(LDLIBS)

$(BUILD)/tests/%: tests/%.c tests/tap.h $(SUPPORT) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(SUPPORT) $(LIB) $(LDLIBS) $(LDFLAGS)

# Tests run from the repository root; they find fixtures under tests/fixtures and the
# shell binary through MINDUCTOR_BIN.
# LeakSanitizer's options (SANITIZE=1) are compiled in: tests/tap.h for the tests, repl/main.c for the shell.
check: $(TESTS) $(BIN) minductor
	MINDUCTOR_BIN=$(abspath $(BIN)) ASAN_OPTIONS=detect_leaks=1 prove -j2 $(TESTS)

# The report's pages in headless Chromium: screenshots in build/html-check/ (skips without chromium).
check-html: $(BIN)
	tests/html/check_html.sh $(BIN)
	tests/html/check_teach.sh $(BIN)

demo: $(BIN) minductor
	./minductor -c 'load examples/seed_example.py; inputs examples/inputs/seed_example; graph; run; passes; check; lower; ir; sched; codegen; exec'

bench: $(LIB) $(SUPPORT)
	$(MAKE) -C bench

# libFuzzer targets (clang): build-fuzz/fuzz_<name>; run one with tests/fuzz/run.sh NAME SECONDS
# after tests/fuzz/seeds.sh, or all with `make fuzz-run` (tests/README.md)
FUZZ_SRC = $(wildcard tests/fuzz/*.c)
FUZZ_BIN = $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
FUZZ_CFLAGS = -std=gnu11 -O1 -g -I. -Icore -fsanitize=fuzzer-no-link,address,undefined \
              $(GV_CFLAGS) $(CJSON_CFLAGS) $(MD_CFLAGS) $(BLAS_CFLAGS) $(NUM_CFLAGS) $(OMP_FLAGS)
fuzz: $(FUZZ_BIN)
# one object per library file (only changed files recompile)
FUZZ_OBJ = $(LIB_SRC:%.c=build-fuzz/obj/%.o)
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
build-fuzz/lib.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $(FUZZ_OBJ)
-include $(wildcard build-fuzz/obj/*/*.d build-fuzz/obj/*/*/*.d)
build-fuzz/%: tests/fuzz/%.c build-fuzz/lib.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< build-fuzz/lib.a $(LDLIBS) -o $@
# the shell's splitter lives in repl/: link the shell's files (not its main) into the target
FUZZ_REPL_SRC = $(filter-out repl/main.c,$(REPL_SRC))
build-fuzz/fuzz_shell: tests/fuzz/fuzz_shell.c build-fuzz/lib.a $(FUZZ_REPL_SRC)
	clang $(FUZZ_CFLAGS) $(RL_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_REPL_SRC) build-fuzz/lib.a $(RL_LIBS) $(LDLIBS) -o $@
build-fuzz/fuzz_session: tests/fuzz/fuzz_session.c build-fuzz/lib.a $(FUZZ_REPL_SRC)
	clang $(FUZZ_CFLAGS) $(RL_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_REPL_SRC) build-fuzz/lib.a $(RL_LIBS) $(LDLIBS) -o $@
build-fuzz/fuzz_serve: tests/fuzz/fuzz_serve.c build-fuzz/lib.a $(FUZZ_REPL_SRC)
	clang $(FUZZ_CFLAGS) $(RL_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_REPL_SRC) build-fuzz/lib.a $(RL_LIBS) $(LDLIBS) -o $@
build-fuzz/graph_seeds: tests/fuzz/tools/graph_seeds.c $(SUPPORT) $(LIB)
	@mkdir -p build-fuzz
	$(CC) $(CFLAGS) -o $@ $< $(SUPPORT) $(LIB) $(LDLIBS) $(LDFLAGS)
# Run every target FUZZ_TIME seconds (one at a time, niced) on seeds from tests/fixtures;
# logs and stats in build-fuzz/logs/, crashers in build-fuzz/crash-<name>/.
FUZZ_TIME ?= 600
FUZZ_TARGETS ?= fx json npy trace sym shell passes lower patterns serve session exec
fuzz-run: fuzz build-fuzz/graph_seeds
	tests/fuzz/seeds.sh
	for t in $(FUZZ_TARGETS); do tests/fuzz/run.sh $$t $(FUZZ_TIME) || exit 1; done

# PyTorch's OpInfo samples (tests/test_opinfo.c; make check runs an eighth of them): all 1214
# cases, with the per-OpInfo table (op, cases, pass, first error); MINDUCTOR_OPINFO=SUBSTRING picks.
check-opinfo: $(BUILD)/tests/test_opinfo
	MINDUCTOR_OPINFO=$${MINDUCTOR_OPINFO:-all} MINDUCTOR_OPINFO_TABLE=1 ./$(BUILD)/tests/test_opinfo

# Long robustness run: 1000 random graphs through the whole pipeline (tests/test_random_graphs.c).
check-long: $(BUILD)/tests/test_random_graphs $(BUILD)/tests/test_regressions
	MINDUCTOR_RANDOM_GRAPHS=1000 MINDUCTOR_RANDOM_KERNELS=1000 MINDUCTOR_RANDOM_KERNELS_STRICT=1 \
	ASAN_OPTIONS=detect_leaks=1 prove -v $(BUILD)/tests/test_random_graphs $(BUILD)/tests/test_regressions

clean:
	rm -rf build build-san build-fuzz minductor
distclean: clean
	rm -f config.mk

-include $(LIB_OBJ:.o=.d) $(REPL_OBJ:.o=.d) $(SUPPORT_OBJ:.o=.d)

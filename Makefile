# Top-level Makefile of the resilient RMA key-value store.
#
#   make deps     install packages, find or build a ULFM Open MPI (once)
#   make          build the library, tools and tests
#   make test     run every test; ends with "N passed, N failed[, N skipped]"
#   make test-sanitize  the same suite on an ASan+UBSan build (build/sanitize)
#   make fuzz     the libFuzzer targets of tests/fuzz, FUZZ_SECONDS each
#   make run      the main job: a default experiment with a kill and recovery
#   make bench    benchmarks; result files land in results/bench/
#   make soak     randomised kill runs per variant and backend (hang counts)
#   make figures  DIR=results/CAMPAIGN: figures and summary table
#   make install  PREFIX=/usr/local: header, libraries, kvstore.pc
#
# The MPI is the one scripts/deps.sh recorded in build/mpi.mk; make runs
# deps by itself when that file is missing.

PREFIX ?= /usr/local
# Output directory; `make test-sanitize` builds into build/sanitize.  The
# MPI record (build/mpi.mk) is shared by every output directory.
BUILD  ?= build
CC_OPT ?= -O2 -g
CFLAGS := $(CC_OPT) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -Ikvstore
LDLIBS_KV := -lsde -lm

.DEFAULT_GOAL := all
-include build/mpi.mk
build/mpi.mk: scripts/deps.sh
	bash scripts/deps.sh

ifndef MPICC
MPICC = $(error no MPI recorded: run 'make deps')
endif

KV_SRC  := $(wildcard kvstore/*.c)
KV_OBJ  := $(KV_SRC:%.c=$(BUILD)/%.o)
KV_HDR  := kvstore/kvstore.h kvstore/kv_internal.h
LIB_A   := $(BUILD)/lib/libkvstore.a
LIB_SO  := $(BUILD)/lib/libkvstore.so

INJ_SRC := $(filter-out injectors/kv_inject.c,$(wildcard injectors/*.c))
INJ_OBJ := $(INJ_SRC:%.c=$(BUILD)/%.o)
INJ_A   := $(BUILD)/lib/libkvinject.a

# Workload, histogram and config-file modules shared by the driver and tests.
EXP_SRC := $(wildcard experiments/driver/workload.c experiments/driver/histogram.c experiments/driver/cfgfile.c)
EXP_OBJ := $(EXP_SRC:%.c=$(BUILD)/%.o)
EXP_A   := $(BUILD)/lib/libkvexp.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
MPIT_SRC := $(wildcard tests/mpi/*.c)
MPIT_BIN := $(MPIT_SRC:tests/mpi/%.c=$(BUILD)/tests/mpi/%)
# The recorded client of the history checker (tests/history).
HIST_SRC := $(wildcard tests/history/*.c)
HIST_BIN := $(HIST_SRC:tests/history/%.c=$(BUILD)/tests/history/%)
BENCH_SRC := $(wildcard experiments/bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:experiments/bench/%.c=$(BUILD)/bin/%)
DRIVER_SRC := $(wildcard experiments/driver/*.c experiments/driver/backends/*.c)
DRIVER_BIN := $(BUILD)/bin/kv_driver
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

.PHONY: all deps lib tests test test-sanitize fuzz run bench soak figures install clean distclean
all: lib tests $(BENCH_BIN) $(DRIVER_BIN) $(if $(wildcard injectors/kv_inject.c),$(BUILD)/bin/kv_inject)

deps:
	bash scripts/deps.sh

lib: $(LIB_A) $(LIB_SO)

$(BUILD)/kvstore/%.o: kvstore/%.c $(KV_HDR) build/mpi.mk
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@

$(LIB_A): $(KV_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(KV_OBJ)
	@mkdir -p $(dir $@)
	$(MPICC) $(CC_OPT) -shared -o $@ $^ $(LDLIBS_KV)

$(BUILD)/injectors/%.o: injectors/%.c $(wildcard injectors/*.h) build/mpi.mk
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iinjectors -c $< -o $@

$(BUILD)/experiments/%.o: experiments/%.c $(wildcard experiments/driver/*.h) build/mpi.mk
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iexperiments/driver -c $< -o $@

$(EXP_A): $(EXP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(INJ_A): $(INJ_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/kv_inject: injectors/kv_inject.c $(INJ_A)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iinjectors $< -o $@ $(INJ_A) -lm

tests: $(UNIT_BIN) $(MPIT_BIN) $(HIST_BIN)

# Unit tests link the objects directly (they test internal pieces).
$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_A) $(INJ_A) $(EXP_A) $(KV_HDR)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iinjectors -Iexperiments/driver $< -o $@ $(EXP_A) $(LIB_A) $(INJ_A) -lcmocka $(LDLIBS_KV)

$(BUILD)/tests/mpi/%: tests/mpi/%.c tests/mpi/kvtest.h $(LIB_A) $(KV_HDR)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $< -o $@ $(LIB_A) $(LDLIBS_KV)

$(BUILD)/tests/history/%: tests/history/%.c tests/mpi/kvtest.h $(LIB_A) $(KV_HDR)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Itests/mpi $< -o $@ $(LIB_A) $(LDLIBS_KV)

$(BUILD)/bin/%: experiments/bench/%.c experiments/driver/ackfile.h experiments/bench/benchstat.h $(LIB_A) $(KV_HDR)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iexperiments/driver -Itests/mpi $< -o $@ $(LIB_A) $(LDLIBS_KV)

$(DRIVER_BIN): $(DRIVER_SRC) $(wildcard experiments/driver/*.h experiments/driver/backends/*.h) $(LIB_A) $(INJ_A) $(EXP_A) $(KV_HDR)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Iinjectors -Iexperiments/driver -Iexperiments/driver/backends -DKV_GIT_REVISION='"$(GIT_REV)"' $(DRIVER_SRC) -o $@ \
	    $(EXP_A) $(INJ_A) $(LIB_A) -lpapi -lhiredis $(LDLIBS_KV)

test: all
	bash tests/run.sh

# AddressSanitizer and UndefinedBehaviorSanitizer over the library, driver,
# injector and tests; every test of `make test` runs on this build.  Leak
# checking is on for the unit tests and off for MPI programs: Open MPI
# itself does not free everything at MPI_Finalize (README, *Hardening*).
SAN_OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-sanitize:
	$(MAKE) BUILD=build/sanitize CC_OPT="$(SAN_OPT)" all
	KV_BUILD=$(CURDIR)/build/sanitize \
	ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1 \
	KV_UNIT_ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 bash tests/run.sh

fuzz: build/mpi.mk
	bash tests/fuzz/run.sh

run: all
	bash experiments/campaign/demo.sh

# make figures DIR=results/CAMPAIGN (default: the default experiment)
DIR ?= results/default
figures:
	python3 analysis/figures.py $(DIR)

soak: all
	bash experiments/bench/soak.sh

bench: all
	bash experiments/bench/bench.sh

install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 kvstore/kvstore.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@MPI_HOME@|$(MPI_HOME)|' -e 's|@VERSION@|0.1.0|' \
	    kvstore/kvstore.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/kvstore.pc

clean:
	rm -rf $(BUILD)/kvstore $(BUILD)/lib $(BUILD)/tests $(BUILD)/bin build/sanitize build/fuzz

distclean:
	rm -rf $(BUILD)

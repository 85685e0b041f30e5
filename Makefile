# Top-level Makefile of the resilient RMA key-value store.
#
#   make deps     install packages, find or build a ULFM Open MPI (once)
#   make          build the library, tools and tests
#   make test     run every test; ends with "N passed, N failed[, N skipped]"
#   make test-sanitize  the same suite on an ASan+UBSan build (build/sanitize)
#   make fuzz     build the libFuzzer targets of tests/fuzz (build/fuzz) and
#                 run each for FUZZ_SECONDS
#   make run      the main job: a default experiment with a kill and recovery
#   make bench    benchmarks; result files land in results/bench/
#   make soak     randomised kill runs per variant and backend (hang counts)
#   make report   rewrite the generated tables of README.md and docs/ (report.py)
#   make figures  DIR=results/CAMPAIGN: figures and summary table
#   make install  PREFIX=/usr/local: header, libraries, kvstore.pc
#
# Every program is linked from object files; sources are found by
# wildcard, one folder per part, so a new file needs no edit here.  Header
# dependencies come from the compiler (-MMD).  The MPI is the one
# scripts/deps.sh recorded in build/mpi.mk: `make deps` runs it, and so
# does any target when that file is missing or older than a patch of
# patches/openmpi (the build it names is then not the series'; deps.sh
# finds the series' build in its cache or makes it), and only then:
# editing deps.sh does not make a plain `make` install packages or build MPI.

PREFIX ?= /usr/local
# Output directory; `make test-sanitize` builds into build/sanitize and
# `make fuzz` into build/fuzz.  The MPI record (build/mpi.mk) is shared.
BUILD  ?= build
CC_OPT ?= -O2 -g
CFLAGS := $(CC_OPT) -std=gnu11 -Wall -Wextra -Wno-unused-parameter -fPIC -MMD -MP

.DEFAULT_GOAL := all
ifeq ($(filter deps clean distclean,$(MAKECMDGOALS)),)
-include build/mpi.mk
-include build/features.mk
endif
build/mpi.mk: $(wildcard patches/openmpi/*.patch)
	bash scripts/deps.sh

# ---- optional libraries ------------------------------------------------------
# scripts/features.sh finds which of them the MPI's compiler links (FEATURES,
# HAVE_x, LIB_x); KV_WITHOUT="sde papi hiredis" builds without some that are
# there.  What is left out is said on every run, and written to
# $(BUILD)/gen/kv_features.h as KV_HAVE_X 0/1 for the sources.
build/features.mk: build/mpi.mk scripts/features.sh
	bash scripts/features.sh "$$(sed -n 's/^MPICC *:= *//p' build/mpi.mk)" > $@.tmp && mv $@.tmp $@
KV_WITHOUT ?=
USED     := $(filter-out $(KV_WITHOUT),$(foreach f,$(FEATURES),$(if $(filter 1,$(HAVE_$(f))),$(f))))
UNUSED   := $(filter-out $(USED),$(FEATURES))
lib_of    = $(if $(filter $(1),$(USED)),$(LIB_$(1)))
ifneq ($(UNUSED),)
$(info make: building without $(UNUSED) (not found by scripts/features.sh, or in KV_WITHOUT): \
  $(foreach f,$(UNUSED),$(LOST_$(f));))
endif
LDLIBS_KV := $(strip $(call lib_of,sde) -lm)

ifndef MPICC
MPICC = $(error no MPI recorded: run 'make deps')
endif

# ---- what is built from where ----------------------------------------------
# obj(DIR...): the object of every .c file in those folders.
obj = $(patsubst %.c,$(BUILD)/%.o,$(foreach d,$(1),$(wildcard $(d)/*.c)))

KV_OBJ   := $(call obj,kvstore)
INJ_OBJ  := $(filter-out %/kv_inject.o,$(call obj,injectors))
DRV_OBJ  := $(filter-out %/kv_driver.o,$(call obj,experiments/driver experiments/driver/backends \
                                                  experiments/taskapp))
LIB_A    := $(BUILD)/lib/libkvstore.a
LIB_SO   := $(BUILD)/lib/libkvstore.so
INJ_A    := $(BUILD)/lib/libkvinject.a
DRV_A    := $(BUILD)/lib/libkvdriver.a

BENCH_BIN := $(patsubst experiments/bench/%.c,$(BUILD)/bin/%,$(wildcard experiments/bench/bench_*.c))
UNIT_BIN  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/unit/test_*.c))
MPIT_BIN  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/mpi/*.c))
HIST_BIN  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/history/*.c))
# The C half of the config-dialect comparison (tests/scripts/test_cfg_dialect.sh).
DIAL_BIN  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/dialect/*.c))
# The seed writer of the fuzz corpora is a plain program; the fuzz targets
# are built by `make fuzz` only.
SEED_BIN  := $(BUILD)/tests/fuzz/make_seeds
FUZZ_BIN  := $(patsubst %.c,$(BUILD)/%,$(wildcard tests/fuzz/fuzz_*.c))
PROGRAMS  := $(BUILD)/bin/kv_driver $(BUILD)/bin/kv_inject $(BENCH_BIN)
ALL_OBJ   := $(call obj,kvstore injectors experiments/driver experiments/driver/backends experiments/taskapp \
                        experiments/bench tests/unit tests/mpi tests/history tests/dialect tests/fuzz)

# Each folder sees its own headers and those of the parts below it.
I_KV    := -Ikvstore
I_INJ   := $(I_KV) -Iinjectors
I_DRV   := $(I_INJ) -Iexperiments/driver -Iexperiments/driver/backends -Iexperiments/taskapp
$(BUILD)/kvstore/%.o:          INC := $(I_KV)
$(BUILD)/injectors/%.o:        INC := $(I_INJ)
$(BUILD)/experiments/driver/%.o: INC := $(I_DRV) -I$(BUILD)/gen
$(BUILD)/experiments/taskapp/%.o: INC := $(I_DRV)
$(BUILD)/experiments/bench/%.o: INC := $(I_KV) -Iexperiments/driver -Itests/mpi
$(BUILD)/tests/unit/%.o:       INC := $(I_DRV)
$(BUILD)/tests/mpi/%.o:        INC := $(I_INJ) -Itests/mpi
$(BUILD)/tests/history/%.o:    INC := $(I_KV) -Itests/mpi
$(BUILD)/tests/dialect/%.o:    INC := -Iexperiments/driver
$(BUILD)/tests/fuzz/%.o:       INC := $(I_DRV) -Itests/fuzz

.PHONY: all deps lib tests test test-sanitize fuzz fuzz-targets run bench soak report stale remeasure figures bench-figures \
        install clean distclean FORCE
all: lib tests $(PROGRAMS)

deps:
	bash scripts/deps.sh

lib: $(LIB_A) $(LIB_SO)
tests: $(UNIT_BIN) $(MPIT_BIN) $(HIST_BIN) $(DIAL_BIN) $(SEED_BIN)

$(BUILD)/%.o: %.c build/mpi.mk | $(BUILD)/gen/kv_features.h
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) $(INC) -I$(BUILD)/gen -c $< -o $@

# KV_HAVE_X for each optional library, rewritten only when it changes.
$(BUILD)/gen/kv_features.h: FORCE
	@mkdir -p $(dir $@)
	@{ echo '/* Written by the Makefile: the optional libraries this build uses (scripts/features.sh). */'; \
	  for f in $(FEATURES); do case " $(USED) " in *" $$f "*) v=1 ;; *) v=0 ;; esac; \
	    printf '#define KV_HAVE_%s %d\n' "$$(echo $$f | tr a-z A-Z)" $$v; done; } > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The revision the driver is built from, and its checkout (where it reads
# the revision again at run time: experiments/driver/provenance.c);
# rewritten only when it changes.
GIT_REV := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
$(BUILD)/gen/revision.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define KV_GIT_REVISION "%s"\n#define KV_SOURCE_DIR "%s"\n' '$(GIT_REV)' '$(CURDIR)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/experiments/driver/provenance.o: $(BUILD)/gen/revision.h

$(LIB_A): $(KV_OBJ)
$(INJ_A): $(INJ_OBJ)
$(DRV_A): $(DRV_OBJ)
$(LIB_A) $(INJ_A) $(DRV_A):
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB_SO): $(KV_OBJ)
	@mkdir -p $(dir $@)
	$(MPICC) $(CC_OPT) -shared -o $@ $^ $(LDLIBS_KV)

# ---- programs: one object (or the named ones) and the archives ------------
$(BUILD)/bin/kv_inject: $(BUILD)/injectors/kv_inject.o $(INJ_A)
$(BUILD)/bin/kv_driver: $(BUILD)/experiments/driver/kv_driver.o $(DRV_A) $(INJ_A) $(LIB_A)
$(BUILD)/bin/kv_driver: LDLIBS := $(call lib_of,papi) $(call lib_of,hiredis) -lcrypto
$(BENCH_BIN): $(BUILD)/bin/%: $(BUILD)/experiments/bench/%.o $(LIB_A)
$(BUILD)/bin/bench_ftcost: $(DRV_A)  # the YCSB generator
$(UNIT_BIN) $(DIAL_BIN): $(BUILD)/%: $(BUILD)/%.o $(DRV_A) $(INJ_A) $(LIB_A)
$(UNIT_BIN): LDLIBS := -lcmocka -lcrypto
$(MPIT_BIN): $(BUILD)/%: $(BUILD)/%.o $(INJ_A) $(LIB_A)
$(HIST_BIN) $(SEED_BIN): $(BUILD)/%: $(BUILD)/%.o $(LIB_A)
$(PROGRAMS) $(UNIT_BIN) $(MPIT_BIN) $(HIST_BIN) $(DIAL_BIN) $(SEED_BIN):
	@mkdir -p $(dir $@)
	$(MPICC) $(CC_OPT) $(filter %.o,$^) -o $@ $(filter %.a,$^) $(LDLIBS) $(LDLIBS_KV)

# libFuzzer targets: the same objects, compiled by clang (through the MPI
# wrapper, OMPI_CC) with coverage and sanitizers into build/fuzz.
FUZZ_OPT := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_CC  ?= clang
fuzz-targets: $(FUZZ_BIN)
$(FUZZ_BIN): $(BUILD)/%: $(BUILD)/%.o $(DRV_A) $(INJ_A) $(LIB_A)
	@mkdir -p $(dir $@)
	$(MPICC) $(CC_OPT) -fsanitize=fuzzer $(filter %.o,$^) -o $@ $(filter %.a,$^) $(call lib_of,papi) $(call lib_of,hiredis) -lcrypto $(LDLIBS_KV)

test: all
	bash tests/run.sh

# AddressSanitizer and UndefinedBehaviorSanitizer over the library, driver,
# injector and tests; every test of `make test` runs on this build.  Leak
# checking is on for the unit tests and off for MPI programs: Open MPI
# itself does not free everything at MPI_Finalize (docs/status.md).
SAN_OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-sanitize:
	$(MAKE) BUILD=build/sanitize CC_OPT="$(SAN_OPT)" all
	KV_BUILD=$(CURDIR)/build/sanitize \
	ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1 \
	KV_UNIT_ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 bash tests/run.sh

fuzz: build/mpi.mk
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: $(FUZZ_CC) not found (make deps installs clang)"; exit 1; }
	$(MAKE) BUILD=build/fuzz CC_OPT="$(FUZZ_OPT)" MPICC="OMPI_CC=$(FUZZ_CC) $(MPICC)" fuzz-targets
	bash tests/fuzz/run.sh

run: all
	bash experiments/campaign/demo.sh

# make figures DIR=results/CAMPAIGN (default: the default experiment)
DIR ?= results/default
figures:
	python3 analysis/figures.py $(DIR)

# every figure of results/bench/, redrawn from the committed files (no set-up)
bench-figures:
	python3 analysis/bench_figures.py

soak: all
	bash experiments/bench/soak.sh

bench: all
	bash experiments/bench/bench.sh

report:
	python3 experiments/bench/report.py update

# the result files that no longer stand for the code, MPI build and machine at hand
stale:
	python3 experiments/bench/report.py stale

# those files made again, a chunk of MINUTES (default 19) at a time
remeasure: all
	bash experiments/bench/remeasure.sh

install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 kvstore/kvstore.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@MPI_HOME@|$(MPI_HOME)|' -e 's|@VERSION@|0.1.0|' \
	    -e 's|@LIBS_PRIVATE@|$(LDLIBS_KV)|' \
	    kvstore/kvstore.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/kvstore.pc

# Everything built, in every output directory; the MPI record stays.
clean:
	find build -mindepth 1 -maxdepth 1 ! -name 'mpi.*' ! -name mpi-stock ! -name mpi-ucx -exec rm -rf {} + 2>/dev/null || true

distclean:
	rm -rf build

-include $(ALL_OBJ:.o=.d)

# amsgd -- build, test, demo and benchmarks.
#
#   make            libraries build/libamsgd.a, build/libamsgd.so.0 and the command build/amsgd
#   make install PREFIX=... [DESTDIR=...]   make uninstall (the same PREFIX, DESTDIR) removes it
#   make install-check  install, build and run against the install (pkg-config, shared and
#                   static), uninstall and check that nothing is left
#   make python-test  the Python binding (python/amsgd) against the command's JSON
#   make test       install missing packages, build, run the Criterion suite, the Python
#                   binding's tests and make doc-quotes-check
#   make doc-quotes-check  the command outputs quoted in docs/*.md are what the commands print
#   make demo       install missing packages, build, run the demo into out/
#   make bench-sde  Euler-Maruyama engine vs Monte Carlo kernel (bench/README-sde.md)
#   make bench      benchmarks (bench/README.md); make bench-sweep: the sweep benchmark
#   make bench-nn   an MLP training step against PyTorch on CPU (bench/README-nn.md)
#   make bench-ps   the parameter-server engine's paths per replica-step (bench/README-ps.md)
#   make resume-test / make mpi-check   kill-resume and serial-vs-MPI checks of the sweeps
#   make MPI=1      the MPI build into build-mpi/ (needs scripts/install-deps.sh --mpi)
#   make bench-scaling  strong scaling of one ensemble over threads and MPI ranks (docs/mpi.md)
#   make validate-quick  amsgd validate --quick (the theorem checks at reduced size)
#   make rerun-check  the committed results in docs/figures reproduce byte for byte (amsgd rerun)
#   make bitident-check  default, -march=native, clang and portable builds give the same bytes
#   make san-test   the test suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make deps       install missing Debian packages only

# make MPI=1: the MPI build (mpicc, -DAM_HAVE_MPI) into build-mpi/; sweeps then distribute
# their cells over the ranks of mpirun/srun (docs/mpi.md).
ifeq ($(MPI),1)
BUILD   ?= build-mpi
CC      := mpicc
MPI_CFLAGS := -DAM_HAVE_MPI
endif
BUILD   ?= build
CC      ?= cc
OPT     ?= -O2
WARN    := -Wall -Wextra -Wshadow -Wconversion -Wno-sign-conversion
CFLAGS  ?= $(OPT) -g
# -ffp-contract=off: in gnu11 mode GCC fuses a*b + c into one fused multiply-add wherever the
# target has one (-march=native), rounding once instead of twice, so output bits would depend
# on the machine and the flags; off, every build rounds each operation as written
# (make bitident-check compares the default, -march=native and clang builds byte for byte).
# make PORTABLE=1: every x86 SIMD path compiled out (AM_X86 0 in core/am_common.h).
ifeq ($(PORTABLE),1)
PORTABLE_CFLAGS := -DAM_PORTABLE
endif
PIC_CFLAGS := -fPIC -fno-semantic-interposition
ALL_CFLAGS := -std=gnu11 -ffp-contract=off $(CFLAGS) $(WARN) -fopenmp -MMD -MP $(MPI_CFLAGS) $(PORTABLE_CFLAGS) $(EXTRA_CFLAGS)
# models/: OpenBLAS for the network GEMMs (called through dgemm_) and zlib for IDX files.
# libgslcblas is kept in the executable's own list (--no-as-needed) ahead of -lopenblas, so
# GSL's cblas_* calls still bind to GSL's CBLAS and existing results stay bit-identical.
LDLIBS  := -lsundials_cvode -lsundials_nvecserial -lgsl -Wl,--no-as-needed -lgslcblas \
           -Wl,--as-needed -lfftw3 -ljansson -lm -lopenblas -lz
LDFLAGS += -fopenmp $(EXTRA_LDFLAGS)

LIB_DIRS := core theory solvers montecarlo models validate studies
LIB_SRC  := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
CLI_SRC  := $(wildcard cli/*.c)
TEST_SRC := $(wildcard tests/*.c)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

LIB  := $(BUILD)/libamsgd.a
BIN  := $(BUILD)/amsgd
TEST := $(BUILD)/test_amsgd
DEPS_STAMP := $(BUILD)/.deps-ok
JOBS ?= 2
# san-test builds with -g1 (function names and line tables, enough for the sanitizers' stack
# traces, at 10 % less compile time than -g) and runs two tests at a time; scripts/san-test.sh
# tells the Criterion runner's own leak (a few bytes per parallel job) from a leak of amsgd's,
# which fails the suite. The statistical power tests (validate_power, converge_power) and the
# escape check's thread invariance repeat, at full size, code that the rest of the suite runs
# under the sanitizers at a small one: they are left to make test (SAN_FILTER= runs them too).
SAN_JOBS ?= $(JOBS)
SAN_FILTER ?= !(validate_power/*|converge_power/*|validate_table/escape_check_thread_invariant)

.PHONY: rerun-check all test demo bench deps san-test check-format format clean figures bench-sde bench-ode bench-sweep resume-test mpi-check install uninstall install-check api-doc validate-quick bitident-check bench-nn

all: $(BIN)

$(DEPS_STAMP): scripts/install-deps.sh
	@mkdir -p $(BUILD)
	scripts/install-deps.sh
	@touch $@

deps:
	scripts/install-deps.sh

# The compile command, rewritten only when it changes: every object (library, command, tests,
# benchmarks) depends on it, so a change of CC, OPT, CFLAGS or EXTRA_CFLAGS recompiles.
FLAGS_STAMP := $(BUILD)/.cflags
$(FLAGS_STAMP): FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' '$(CC) $(ALL_CFLAGS) $(PIC_CFLAGS)' | cmp -s - $@ || printf '%s\n' '$(CC) $(ALL_CFLAGS) $(PIC_CFLAGS)' > $@
FORCE:

# One object per source for the static library, the command, the tests and the shared
# libraries: position-independent (-fPIC; -fno-semantic-interposition lets the compiler inline
# and call within the library as it does without -fPIC), cli objects with hidden symbols (only
# embed.h's AM_CLI_EXPORT functions leave libamsgd-cli.so).
$(BUILD)/cli/%.o: cli/%.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PIC_CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PIC_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(TEST): $(TEST_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(LIB) $(LDLIBS) -lcriterion

# A sub-make compiles JOBS files at a time unless make itself was given -j (then it shares
# that job server).
SUBJOBS = $$(case "$$MAKEFLAGS" in *j*) ;; *) echo -j$(JOBS) ;; esac)

# The tests call build/amsgd for the command-line contract; AMSGD tells them where it is.
test: $(DEPS_STAMP)
	$(MAKE) $(SUBJOBS) --no-print-directory $(BIN) $(TEST)
	AMSGD=$(abspath $(BIN)) $(TEST) --jobs $(JOBS)
	$(MAKE) --no-print-directory python-test
	$(MAKE) --no-print-directory doc-quotes-check

san-test: $(DEPS_STAMP)
	$(MAKE) $(SUBJOBS) --no-print-directory BUILD=build-san CFLAGS="-O1 -g1" \
	    EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" build-san/amsgd build-san/test_amsgd
	tests/san_leaks_test.sh
	scripts/san-test.sh build-san $(SAN_JOBS) '$(SAN_FILTER)'

# the whole build (the shared libraries too), so that the Python binding works after it
demo: $(DEPS_STAMP)
	$(MAKE) $(SUBJOBS) --no-print-directory all
	scripts/demo.sh $(BIN) out

figures: $(DEPS_STAMP)
	$(MAKE) $(SUBJOBS) --no-print-directory $(BIN)
	scripts/figures.sh $(BIN)

bench: $(DEPS_STAMP)
	scripts/install-deps.sh --bench
	$(MAKE) $(SUBJOBS) --no-print-directory $(BIN) $(BUILD)/bench_mc $(BUILD)/bench_rng $(BUILD)/bench_sde \
	    $(BUILD)/bench_ode
	scripts/bench.sh $(BUILD)

$(BUILD)/bench_mc: $(BUILD)/bench/bench_mc.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Euler-Maruyama engine cost per coordinate-step next to the Monte Carlo kernel (bench/README-sde.md).
bench-sde:
	$(MAKE) $(SUBJOBS) --no-print-directory $(BUILD)/bench_sde
	$(BUILD)/bench_sde

$(BUILD)/bench_sde: $(BUILD)/bench/bench_sde.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# One MLP training step against PyTorch on CPU, one thread, float64 (bench/README-nn.md).
bench-nn: $(DEPS_STAMP)
	scripts/install-deps.sh --bench
	$(MAKE) $(SUBJOBS) --no-print-directory $(BUILD)/bench_nn
	OPENBLAS_NUM_THREADS=1 $(BUILD)/bench_nn > $(BUILD)/bench-nn.txt
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 bench/nn_torch.py $(BUILD)/bench-nn.txt

$(BUILD)/bench_nn: $(BUILD)/bench/bench_nn.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# CVODE against SciPy solve_ivp on the limit ODE (bench/README-ode.md).
bench-ode: $(DEPS_STAMP)
	scripts/install-deps.sh --bench
	$(MAKE) $(SUBJOBS) --no-print-directory $(BUILD)/bench_ode
	scripts/bench-ode.sh $(BUILD)

$(BUILD)/bench_ode: $(BUILD)/bench/bench_ode.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# Sweep checks and benchmark (docs/phase.md, docs/mpi.md): kill/resume byte-for-byte test,
# serial-versus-MPI comparison (builds build-mpi/), liu2018 preset timing and memory.
resume-test: $(BIN)
	tests/resume_test.sh $(BIN)

# The committed results of docs/figures rerun byte for byte (scripts/rerun-check.sh; the
# full-size network runs through their --quick twins).
rerun-check: $(BIN)
	scripts/rerun-check.sh $(BIN)

# The theorem checks at reduced size (docs/validate.md); exit status 1 if any check fails.
validate-quick: $(BIN)
	$(BIN) validate --quick --threads 2

# '+': the scripts run make themselves, which then shares this make's job server
mpi-check:
	+scripts/mpi-check.sh

# Strong scaling of one ensemble of 10^5 replicas: 1 vs 2 threads, 1 vs 2 MPI ranks (docs/mpi.md).
.PHONY: bench-scaling
bench-scaling:
	scripts/bench-scaling.sh 3 100000 8

# Default, -march=native, clang and portable (PORTABLE=1) builds must write the same bytes
# (scripts/bitident-check.sh).
bitident-check: $(DEPS_STAMP)
	+scripts/bitident-check.sh

bench-sweep: $(BIN)
	scripts/bench-sweep.sh $(BUILD)

# ==== shared libraries, install, Python binding (begin) ===================================
# The shared libraries, from the objects of the static library and the command:
#   libamsgd.so.0      the library (the objects of libamsgd.a)
#   libamsgd-cli.so.0  the subcommands without main.c plus cli/embed.c's am_cli_call, linked
#                      against libamsgd.so.0 (RUNPATH $ORIGIN); exports am_cli_call and
#                      am_cli_free only. The Python binding (python/amsgd) loads it.
SOVERSION   := 0
SHLIB       := $(BUILD)/libamsgd.so.$(SOVERSION)
CLI_SHLIB   := $(BUILD)/libamsgd-cli.so.$(SOVERSION)
PIC_LIB_OBJ := $(LIB_OBJ)
PIC_CLI_OBJ := $(filter-out $(BUILD)/cli/main.o,$(CLI_OBJ))
PYTHON      ?= $(firstword $(wildcard /usr/bin/python3) python3)

.PHONY: shared python-test doc-quotes-check FORCE
shared: $(SHLIB) $(CLI_SHLIB)
ifneq ($(MPI),1)
all: shared
endif

$(SHLIB): $(PIC_LIB_OBJ)
	$(CC) -shared -Wl,-soname,libamsgd.so.$(SOVERSION) -Wl,--no-undefined $(LDFLAGS) -o $@ \
	    $(PIC_LIB_OBJ) $(LDLIBS)
	ln -sf libamsgd.so.$(SOVERSION) $(BUILD)/libamsgd.so

$(CLI_SHLIB): $(PIC_CLI_OBJ) $(SHLIB)
	$(CC) -shared -Wl,-soname,libamsgd-cli.so.$(SOVERSION) -Wl,--no-undefined \
	    -Wl,-rpath,'$$ORIGIN' $(LDFLAGS) -o $@ $(PIC_CLI_OBJ) $(SHLIB) $(LDLIBS) -lpthread

# The installed command: build/amsgd with cmd_figures.c compiled for the data folder of
# PREFIX (AM_DATADIR), so `amsgd figures` finds the installed gnuplot scripts anywhere.
DATADIR      = $(PREFIX)/share/amsgd
INST_BIN    := $(BUILD)/inst/amsgd
INST_FIG_OBJ := $(BUILD)/inst/cli/cmd_figures.o

$(BUILD)/inst/.prefix: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' > $@

$(INST_FIG_OBJ): cli/cmd_figures.c $(BUILD)/inst/.prefix $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DAM_DATADIR='"$(DATADIR)"' -c $< -o $@

$(INST_BIN): $(filter-out $(BUILD)/cli/cmd_figures.o,$(CLI_OBJ)) $(INST_FIG_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(filter-out $(LIB),$^) $(LIB) $(LDLIBS)

# make install PREFIX=... [DESTDIR=...]: the command, both libraries (static and shared,
# soname libamsgd.so.0), the headers (under include/amsgd/, with the umbrella
# <amsgd/amsgd.h>), a pkg-config file, the man page, the docs with the gnuplot scripts
# (share/amsgd/docs/, the scripts in share/amsgd/docs/figures/), the embedding example, and
# the Python package (lib/python3/dist-packages/amsgd, with libamsgd-cli.so.0 in lib/).
# It lists every file it wrote and every folder it created in share/amsgd/install-manifest
# (paths under PREFIX, without DESTDIR; installing again adds to the list), which
# make uninstall (the same PREFIX and DESTDIR) reads: scripts/uninstall.sh.
PREFIX  ?= /usr/local
PYDIR   := $(PREFIX)/lib/python3/dist-packages
HEADERS := $(filter-out %_impl.h,$(foreach d,core theory solvers montecarlo models validate studies,$(wildcard $(d)/*.h)))
MANIFEST = $(DATADIR)/install-manifest
INST_TOP_DOCS := README.md $(wildcard ARCHITECTURE.md)
INST_DOCS     := $(wildcard docs/*.md docs/*.json)
INST_FIGURES  := $(wildcard docs/figures/*)
INST_EXAMPLES := examples/embed.c examples/binding.py
INST_PY       := $(wildcard python/amsgd/*.py)
# Every file make install writes (under PREFIX) and the folders it writes into.
INST_FILES = $(PREFIX)/bin/amsgd $(PREFIX)/lib/libamsgd.a $(PREFIX)/lib/libamsgd.so.$(SOVERSION) \
    $(PREFIX)/lib/libamsgd.so $(PREFIX)/lib/libamsgd-cli.so.$(SOVERSION) \
    $(PREFIX)/include/amsgd/amsgd.h $(HEADERS:%=$(PREFIX)/include/amsgd/%) \
    $(PREFIX)/lib/pkgconfig/amsgd.pc $(PREFIX)/share/man/man1/amsgd.1 \
    $(addprefix $(DATADIR)/,$(notdir $(INST_TOP_DOCS))) \
    $(addprefix $(DATADIR)/docs/,$(notdir $(INST_DOCS))) \
    $(addprefix $(DATADIR)/docs/figures/,$(notdir $(INST_FIGURES))) \
    $(addprefix $(DATADIR)/examples/,$(notdir $(INST_EXAMPLES))) \
    $(addprefix $(PYDIR)/amsgd/,$(notdir $(INST_PY))) $(MANIFEST)
INST_DIRS = $(sort $(patsubst %/,%,$(dir $(INST_FILES))))
install: $(INST_BIN) $(LIB) $(SHLIB) $(CLI_SHLIB)
	@for d in $(INST_DIRS); do \
	    while [ "$$d" != / ] && [ "$$d" != . ] && [ ! -d "$(DESTDIR)$$d" ]; do \
	        echo "d $$d"; d=$$(dirname "$$d"); \
	    done; \
	done > $(BUILD)/inst/created-dirs
	install -d $(addprefix $(DESTDIR),$(INST_DIRS))
	@{ [ ! -f $(DESTDIR)$(MANIFEST) ] || cat $(DESTDIR)$(MANIFEST); cat $(BUILD)/inst/created-dirs; \
	   printf 'f %s\n' $(INST_FILES); } | LC_ALL=C sort -u > $(BUILD)/inst/install-manifest
	install -m 644 $(BUILD)/inst/install-manifest $(DESTDIR)$(MANIFEST)
	install -m 755 $(INST_BIN) $(DESTDIR)$(PREFIX)/bin/amsgd
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libamsgd.a
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/libamsgd.so.$(SOVERSION)
	ln -sf libamsgd.so.$(SOVERSION) $(DESTDIR)$(PREFIX)/lib/libamsgd.so
	install -m 755 $(CLI_SHLIB) $(DESTDIR)$(PREFIX)/lib/libamsgd-cli.so.$(SOVERSION)
	install -m 644 amsgd.h $(DESTDIR)$(PREFIX)/include/amsgd/amsgd.h
	for h in $(HEADERS); do install -m 644 $$h $(DESTDIR)$(PREFIX)/include/amsgd/$$h; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define AM_VERSION "\(.*\)"/\1/p' core/am_common.h)|' \
	    scripts/amsgd.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/amsgd.pc
	install -m 644 docs/amsgd.1 $(DESTDIR)$(PREFIX)/share/man/man1/amsgd.1
	install -m 644 $(INST_TOP_DOCS) $(DESTDIR)$(DATADIR)/
	install -m 644 $(INST_DOCS) $(DESTDIR)$(DATADIR)/docs/
	install -m 644 $(INST_FIGURES) $(DESTDIR)$(DATADIR)/docs/figures/
	install -m 644 $(INST_EXAMPLES) $(DESTDIR)$(DATADIR)/examples/
	install -m 644 $(INST_PY) $(DESTDIR)$(PYDIR)/amsgd/

# make uninstall PREFIX=... [DESTDIR=...]: removes the files of share/amsgd/install-manifest
# (with the bytecode Python wrote for the installed modules) and the folders make install
# created, where they are empty; nothing else.
uninstall:
	scripts/uninstall.sh '$(DESTDIR)' '$(PREFIX)' '$(MANIFEST)'

# The binding's tests (python/tests, standard-library unittest) against build/amsgd's JSON.
python-test: $(BIN) $(CLI_SHLIB)
	AMSGD=$(abspath $(BIN)) AMSGD_LIBDIR=$(abspath $(BUILD)) PYTHONPATH=$(abspath python) \
	    $(PYTHON) python/tests/run.py

# Every command output quoted in docs/*.md is what the command prints (scripts/doc-quotes.py,
# the convention in docs/README.md), and the checker fails on wrong quotes; validate.md's
# table and row counts are those of docs/validate_full.json. A few seconds.
doc-quotes-check: $(BIN) $(CLI_SHLIB)
	AMSGD=$(abspath $(BIN)) tests/doc_quotes_test.sh $(PYTHON)
	$(PYTHON) scripts/doc-quotes.py --amsgd $(BIN)
	$(PYTHON) scripts/validate-table.py --check

# Installs into a temporary prefix, builds examples/embed.c against it with pkg-config
# (static and shared), builds the C programs of docs/sde.md and docs/statistics.md with
# each command they document and compares what they print, runs an installed
# `amsgd figures` and `import amsgd`, then make uninstall (also staged with DESTDIR) and
# fails on anything left (scripts/install-check.sh).
install-check: $(DEPS_STAMP)
	+PYTHON=$(PYTHON) scripts/install-check.sh

-include $(PIC_LIB_OBJ:.o=.d) $(PIC_CLI_OBJ:.o=.d) $(INST_FIG_OBJ:.o=.d)
# ==== shared libraries, install, Python binding (end) =====================================

# docs/api.md from the public headers.
api-doc:
	python3 scripts/api-doc.py > docs/api.md

$(BUILD)/bench_rng: $(BUILD)/bench/bench_rng.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# ARCHITECTURE.md's include rules and amsgd.h's list of headers against the code (and the
# same check failing on copies with a broken rule planted).
.PHONY: check-layers
check-layers:
	PYTHON=$(PYTHON) tests/check_layers_test.sh

check-format:
	clang-format --dry-run --Werror $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(wildcard */*.h)

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(wildcard */*.h)

clean:
	rm -rf build build-san build-bitident out

BENCH_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/*.c))
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d)

# The parameter-server engine's paths per replica-step, side by side (bench/README-ps.md).
bench-ps:
	$(MAKE) $(SUBJOBS) --no-print-directory $(BUILD)/bench_ps
	$(BUILD)/bench_ps

$(BUILD)/bench_ps: $(BUILD)/bench/bench_ps.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
.PHONY: bench-ps

# The two commands of the README: `make run` and `make test`. Both install what is missing first.
PRESET ?= $(if $(CI),ci,dev)
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all setup configure build run test package fuzz fuzz-build asan-test tsan-test screenshots format format-check tidy clean

all: build

setup:
	@bash packaging/setup-debian.sh

configure: setup
	@test -f $(BUILD_DIR)/build.ninja || cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET) -j $(JOBS)

# Without a display (a fresh server, a container) the GUI runs under Xvfb so the command still works.
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		$(BUILD_DIR)/app/rpcscope; \
	else \
		echo "make run: no display found, running the GUI under xvfb-run"; \
		xvfb-run -a -s "-screen 0 1600x1000x24" $(BUILD_DIR)/app/rpcscope; \
	fi

test: build
	ctest --preset $(PRESET) -j $(JOBS)

# The third command: a .deb of this build (CPack, packaging/CMakeLists.txt) in the current folder, for
# `apt install ./rpcscope_*.deb`. tests/packaging checks the same package inside `make test`.
package: build
	cpack --config $(BUILD_DIR)/CPackConfig.cmake -B $(BUILD_DIR)/package
	cp $(BUILD_DIR)/package/rpcscope_*.deb .
	@ls -l rpcscope_*.deb

# libFuzzer targets (tests/fuzz; the fuzz preset: clang 14, ASan + UBSan, core and the fuzzers only, in build/fuzz),
# each run for FUZZ_SECONDS from its seed corpus. CI runs `make fuzz`. Measured here (2 cores, 2 Dec 2026), from an
# empty build/fuzz with FUZZ_SECONDS=40: 21.9 min, 18 of them building, while three other builds shared the cores
# (load 6 to 7). Hence 30 s each by default. The seven fuzzers run one per CPU at a time (FUZZ_JOBS): on 2 CPUs their
# part is 4 x FUZZ_SECONDS plus ~10 s (it was 7 x, one after the other).
# A longer run: `make fuzz FUZZ_SECONDS=3600`, or one target: `tests/fuzz/run.sh 3600 fuzz_scenario`.
FUZZ_SECONDS ?= 30
fuzz-build:
	@bash packaging/setup-debian.sh debian-packages.txt debian-packages-fuzz.txt
	@test -f build/fuzz/build.ninja || cmake --preset fuzz
	cmake --build --preset fuzz -j $(JOBS)

fuzz: fuzz-build
	bash tests/fuzz/run.sh $(FUZZ_SECONDS)

# The sanitizer runs (README, "Sanitizer runs"); .ci/run runs both. asan-test: the whole suite built with ASan+UBSan
# (build/asan). tsan-test: only the targets and tests the tsan presets name, whose threads meet in code TSan can see
# (build/tsan). In the ASan suite the tests that must find a slower server (or none, A/A) run alone (RUN_SERIAL, set
# by the asan preset's RPCSCOPE_SERIAL_VERDICT_TESTS): under ASan another test beside them starves them and they judge
# the machine's load (a clean-clone run on 5 Dec failed tst_cli's historyAndCompare and A/A until-decided that way):
# tst_cli's four such tests run as tst_cli_verdicts, its other tests as tst_cli beside the rest.
# The rest run two at a time: one at a time, the whole suite made CI take 54 minutes. Measured on a clean clone (2 cores, 3 Dec 2026), from clean build directories: asan-test 10.4 min
# (ctest 2), tsan-test 3.1 min; with test and fuzz, .ci/run took 29 minutes. Sanitizer builds leave packaging out
# (RPCSCOPE_PACKAGING=OFF in their presets): nothing is shipped from them.
asan-test: setup
	@bash packaging/setup-debian.sh debian-packages.txt debian-packages-fuzz.txt
	@test -f build/asan/build.ninja || cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

tsan-test: setup
	@test -f build/tsan/build.ninja || cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS)
	ctest --preset tsan -j $(JOBS)

# Regenerates the README's screenshots under Xvfb.
screenshots: build
	bash packaging/screenshots.sh $(BUILD_DIR)

# The tree's formatting (.clang-format): `format` applies it, `format-check` fails on any difference (CI runs it).
# format-check also fails on a function over 150 lines in core/, ui/ or app/ and prints the longest
# (.ci/function-lengths; python3 comes with the peers' packages).
SOURCES = $(shell git ls-files '*.cpp' '*.h')
format: setup
	clang-format -i $(SOURCES)

format-check: setup
	@clang-format --dry-run --Werror $(SOURCES) || { echo "make format-check: run 'make format'" >&2; exit 1; }
	@python3 .ci/function-lengths --top 5

# clang-tidy with the checked-in .clang-tidy on the .cpp files of core/, ui/ and app/ changed since BASE, or on FILES,
# JOBS at a time; fails on any finding. BASE defaults to .ci/tidy-base: the last commit whose whole tree was found
# clean (`make tidy FILES="$$(git ls-files 'core/*.cpp' 'ui/*.cpp' 'app/*.cpp')"`, ~25 min on 2 cores; move the
# base forward after such a run, or after a plain `make tidy` passed at that commit: the files it did not check are
# the base's, and a finding in a header shows in the changed files that include it). CI runs `make tidy`. Needs a
# configured build (its compile_commands.json).
BASE ?= $(shell cat .ci/tidy-base 2>/dev/null || echo HEAD~1)
tidy: configure
	@if [ -z "$$FILES" ] && ! git rev-parse -q --verify "$(BASE)^{commit}" >/dev/null; then \
		echo "make tidy: $(BASE) is not in this clone (a shallow one?): give FILES= or BASE="; exit 1; fi; \
	files="$${FILES:-$$(git diff --name-only --diff-filter=AM $(BASE) -- 'core/*.cpp' 'ui/*.cpp' 'app/*.cpp')}"; \
	if [ -z "$$files" ]; then echo "make tidy: no changed .cpp files since $(BASE)"; exit 0; fi; \
	echo "make tidy: $$(echo $$files | wc -w) file(s) changed since $(BASE)"; \
	echo $$files | tr ' ' '\n' | xargs -P $(JOBS) -n 1 clang-tidy -p $(BUILD_DIR) --quiet --warnings-as-errors='*' \
		|| { echo "make tidy: clang-tidy found something (above)" >&2; exit 1; }

clean:
	rm -rf build

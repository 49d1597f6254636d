# The two commands of the README: `make run` and `make test`. Both install what is missing first.
PRESET ?= $(if $(CI),ci,dev)
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: all setup configure build run test asan-test tsan-test screenshots format format-check tidy clean

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

# The sanitizer runs CI makes after `test` (README, "Sanitizer runs"). asan-test: the whole suite built with ASan+UBSan
# (build/asan). tsan-test: only the targets and tests the tsan presets name, whose threads meet in code TSan can see
# (build/tsan). Measured here (2 cores, shared with other builds, load 2-8), from a clean build directory: asan-test
# 43 min (build 37, ctest -j2 6), tsan-test about 13 min (build about 11: 22 CPU-minutes in its ninja log, measured
# in pieces; ctest 1.2-2.5), beside test's ~8 + ~2: about 66 minutes of CI's 90.
asan-test: setup
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
SOURCES = $(shell git ls-files '*.cpp' '*.h')
format: setup
	clang-format -i $(SOURCES)

format-check: setup
	@clang-format --dry-run --Werror $(SOURCES) || { echo "make format-check: run 'make format'" >&2; exit 1; }

# clang-tidy with the checked-in .clang-tidy on the C++ files changed since BASE (default: the previous commit), or on
# FILES; needs a configured build (its compile_commands.json).
BASE ?= HEAD~1
tidy: configure
	@files="$${FILES:-$$(git diff --name-only --diff-filter=AM $(BASE) -- '*.cpp')}"; \
	if [ -z "$$files" ]; then echo "make tidy: no changed .cpp files since $(BASE)"; exit 0; fi; \
	clang-tidy -p $(BUILD_DIR) --quiet $$files

clean:
	rm -rf build

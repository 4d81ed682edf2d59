# ptyplex: build, test, benchmark, fuzz and demo targets.
# `make demo` runs the main job; `make test` runs the test suite.

GO       ?= go
BIN      := bin
FUZZTIME ?= 30s

.PHONY: test-node typecheck-node npm npm-smoke bench-node node-pty xtermjs test-portable cross release portable-sidecar test-windows bench-windows

.PHONY: procs
.PHONY: all build check test test-deps vet fmt-check mod-check stress bench bench-quick fuzz fuzz-short soak soak-short demo clean agent-measure

all: build

# Without cgo, as release and the npm package build them
# (node/scripts/build-npm.sh): make bench measures what ships. With cgo
# (net and os/user have cgo variants) the persistent server also mapped
# the C library and gave each thread a C stack: 1.3 MiB more RSS with 64
# flooding terminals (docs/persist.md).
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

# --- Tests: three tiers (docs/testing.md) ---
#   make check  before every commit: gofmt, vet and the unit tests (the
#               packages that need no built binary, daemon or server), -short
#   make test   all that proves the product: the whole suite under the race
#               detector with xterm.js and sshd, the npm package's tests and
#               the first-use steps; installs what it drives (test-deps),
#               prints the ten slowest tests, the number of tests and each
#               package's coverage, and fails if it leaves a process behind
#   .ci/run     make test, fuzz-short, the portable leg, cross builds and
#               the Windows leg
# The screen package's differential test needs xterm.js (the xtermjs
# target) and the remote tests /usr/sbin/sshd; PTYPLEX_REQUIRE_XTERMJS and
# PTYPLEX_REQUIRE_SSHD make them fail, not skip, without.
MODULE   := github.com/ptyplex/ptyplex
E2E_PKGS := cmd/ptyplex cmd/ptyplex-bench mcpserver client sidecar sidecar/persist soak replay examples/demo internal/testing/sshtest internal/testing/testproc
CHECK_PKGS = $(filter-out $(addprefix $(MODULE)/,$(E2E_PKGS)),$(shell $(GO) list ./...))

check: fmt-check vet
	$(GO) test -short -count=1 $(CHECK_PKGS)

# Every process make test starts carries this mark in its environment
# (internal/testing/testproc adds one per test binary); scripts/leftovers.sh fails
# the run if any is still running after it.
TEST_RUN := mk$(shell od -An -N6 -tx1 /dev/urandom 2>/dev/null | tr -d ' \n')
# The end-to-end tests spend most of their time waiting on programs and
# daemons, so more of them run at once than there are cores.
TESTPARALLEL ?= 6
TESTJSON     := $(BIN)/go-test.json
# A race-built program sleeps 1 s when it exits (the race runtime's
# atexit_sleep_ms) unless told otherwise; the test binaries set it for the
# binaries they start (internal/testing/testproc), this for themselves.
TESTENV := PTYPLEX_REQUIRE_XTERMJS=1 PTYPLEX_REQUIRE_SSHD=1 GORACE="$${GORACE:-atexit_sleep_ms=20}"

# Tests that skip under -race; make test runs them once without it.
NORACE_TESTS := TestSnapshotCutToFitAFrame

# A step that fails still has the run's leftovers ended and named before
# make stops (SWEEP_ON_FAIL), as a passing run has them at its end.
SWEEP_ON_FAIL = || { scripts/leftovers.sh $(TEST_RUN); exit 1; }
test: export PTYPLEX_TEST_OWNER := $(TEST_RUN)
test: fmt-check vet mod-check xtermjs test-deps
	@mkdir -p $(BIN)
	$(TESTENV) $(GO) run ./scripts/testreport -o $(TESTJSON) -- \
		$(GO) test -race -count=1 -json -cover -parallel $(TESTPARALLEL) -timeout 20m ./... $(SWEEP_ON_FAIL)
	# The npm package's tests, the documented install and first-use steps
	# (on a fresh clone) and what is too slow under the race detector (it
	# skips there, and runs once without it) wait on programs or on one
	# build most of the time: they run side by side, each one's output
	# kept apart and shown whole after.
	@echo "make test-node & scripts/first-use.sh & go test -run '^$(NORACE_TESTS)$$' ./sidecar/persist"
	@( $(MAKE) test-node > $(BIN)/test-node.log 2>&1; echo $$? > $(BIN)/test-node.rc ) & \
		( $(TESTENV) $(GO) test -count=1 -run '^$(NORACE_TESTS)$$' ./sidecar/persist > $(BIN)/norace.log 2>&1; echo $$? > $(BIN)/norace.rc ) & \
		scripts/first-use.sh > $(BIN)/first-use.log 2>&1; fu=$$?; wait; \
		echo "== make test-node"; cat $(BIN)/test-node.log; echo "== scripts/first-use.sh"; cat $(BIN)/first-use.log; \
		echo "== go test -run '^$(NORACE_TESTS)$$' ./sidecar/persist"; cat $(BIN)/norace.log; \
		[ $$fu -eq 0 ] && [ "$$(cat $(BIN)/test-node.rc)" = 0 ] && [ "$$(cat $(BIN)/norace.rc)" = 0 ] $(SWEEP_ON_FAIL)
	scripts/leftovers.sh $(TEST_RUN)
	@$(GO) run ./scripts/testreport -slowest 10 $(TESTJSON)

# The plain sidecar's end-to-end suite with every host through
# `ptyplex-sidecar --persist NAME --readopt`, one server for two runs in a
# row, as a host's own smoke tests would run against it (docs/persist.md).
# Not in make test (about 2 minutes; make test is at its 8-minute budget):
# there sidecar/persist's TestReadopt* and TestOrphan* stand for it.
# RUN='TestA|TestB' make test-readopt runs a part.
.PHONY: test-readopt
test-readopt:
	scripts/test-readopt.sh

# What the end-to-end tests drive: vim, less, tmux, procps, zsh and sshd,
# installed with apt-get when missing.
test-deps:
	scripts/test-deps.sh

# xterm.js headless for screen's differential test (diff_test.go): npm ci
# from the lock file, again only when the lock file changes.
XTERMJS := screen/internal/xtermjs
xtermjs: $(XTERMJS)/node_modules/.ptyplex-installed
$(XTERMJS)/node_modules/.ptyplex-installed: $(XTERMJS)/package.json $(XTERMJS)/package-lock.json
	cd $(XTERMJS) && npm ci --no-audit --no-fund
	touch $@

# Every package's tests, STRESS_COUNT rounds under -race, beside one busy
# loop per core (scripts/stress.sh). STRESS_PKGS narrows it.
STRESS_COUNT ?= 5
stress: xtermjs
	PTYPLEX_REQUIRE_XTERMJS=1 STRESS_COUNT=$(STRESS_COUNT) scripts/stress.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# go.mod and go.sum as go mod tidy leaves them, in the root module and in the
# nested vteval module (testdata/screen/vteval: ./... skips testdata, so
# nothing else builds it), and vteval still builds against this tree.
VTEVAL := testdata/screen/vteval
mod-check:
	$(GO) mod tidy -diff
	cd $(VTEVAL) && $(GO) mod tidy -diff && $(GO) build -o /dev/null .

# One Markdown table of ptyplex against same-run baselines (see
# docs/performance.md); BENCHFLAGS=-quick for a smoke run, -only REGEXP to select.
BENCHFLAGS ?=
# The portable backend's sidecar is built alongside, for its rows.
PORTABLE_SIDECAR := $(BIN)/portable/ptyplex-sidecar
# Where Wine is installed, the Windows row (bench-windows) follows.
bench: build portable-sidecar node-pty
	$(BIN)/ptyplex-bench -sidecar $(BIN)/ptyplex-sidecar -portable-sidecar $(PORTABLE_SIDECAR) -svg docs/bench.svg $(BENCHFLAGS)
	@if command -v wine >/dev/null 2>&1 && command -v x86_64-w64-mingw32-ld >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory bench-windows; \
	else echo "make bench: no Wine here (apt-get install wine wine64 binutils-mingw-w64-x86-64), so no Windows row (make bench-windows)"; fi

# The sidecar's number of Ps (GOMAXPROCS) against plain reads: 1, the CPU
# count and twice it, rounds alternating (scripts/procs.py; docs/performance.md).
PROCS_ROUNDS ?= 4
procs: build
	scripts/procs.py $(PROCS_ROUNDS)

# The scripted agent task through the MCP server, before and after run,
# wait_input and since reads: prints the calls and characters it cost.
agent-measure:
	go test -count=1 -v -timeout 10m -run TestAgentTaskCost ./mcpserver/ | grep -E 'agent task|^(ok|FAIL|---)'

bench-quick: build portable-sidecar
	$(BIN)/ptyplex-bench -sidecar $(BIN)/ptyplex-sidecar -portable-sidecar $(PORTABLE_SIDECAR) -quick $(BENCHFLAGS)

portable-sidecar:
	CGO_ENABLED=0 $(GO) build -tags ptyplex_portable -ldflags "$(LDFLAGS)" -o $(PORTABLE_SIDECAR) ./cmd/ptyplex-sidecar

# Every fuzz target in turn (go test fuzzes one target per run) for
# FUZZTIME each; crashers land in the package's testdata/fuzz/ and become
# regression inputs of plain `go test`. fuzz-short is the CI version.
FUZZ_TARGETS := proto:FuzzReadFrame proto:FuzzParseData proto:FuzzParseControl screen/vtparse:FuzzParse \
	sidecar:FuzzDispatch sidecar/persist:FuzzServerDispatch sidecar/persist:FuzzSnapshotRestores session/wire:FuzzParseRequest screen:FuzzScreen internal/session/termfilter:FuzzFilter \
	internal/cescape:FuzzEscape
FUZZMINIMIZE ?= 10s
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; echo "== $$fn ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) ./$$pkg/; \
	done

# Counted, not timed: a timed run that ends while the fuzzer is minimizing
# a new input fails with "context deadline exceeded" (a go test quirk),
# which would make CI flaky.
fuzz-short:
	$(MAKE) fuzz FUZZTIME=10000x FUZZMINIMIZE=500x

# Soak and fault tests at full size (10,000 OPEN/CLOSE cycles, 64 MiB
# streams, a 10 s stalled host, ...); `go test ./...` runs the short version.
SOAKTIME ?= 60m
# The long loops of other packages and of the npm package's tests at their
# full size (PTYPLEX_SOAK=1: internal/testing/testsize, node/test/helpers.js):
# make test runs a short round of each.
SOAK_LONG := ^Test(WaitInputAfterBursts|ResumeOverSSH|JournalDirSIGKILLMidFlood|OrphanFloodingHostKilledTenTimes|UpgradeExposesNoDescriptor)$$
soak: build
	$(GO) test -count=1 -v -timeout $(SOAKTIME) ./soak/ -soak
	PTYPLEX_SOAK=1 $(TESTENV) $(GO) test -race -count=1 -timeout $(SOAKTIME) -run '$(SOAK_LONG)' ./cmd/ptyplex/ ./client/ ./sidecar/persist/
	# The npm package's loops at full size (node/test/helpers.js soakSize).
	cd node && PTYPLEX_SOAK=1 PTYPLEX_REQUIRE_SSHD=1 PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node --test --test-concurrency=2 test/*.test.js test/*.test.mjs

soak-short:
	$(GO) test -race -count=1 -v ./soak/

# The npm package in node/ (see node/README.md): its tests against the
# built sidecar, the per-platform packages and their offline install test,
# and the benchmark against node-pty.
test-node: build typecheck-node
	cd node && PTYPLEX_REQUIRE_SSHD=1 PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node --test --test-concurrency=4 test/*.test.js test/*.test.mjs
	VERSION=$(VERSION) COMMIT=$(COMMIT) node/scripts/npm-smoke.sh

# index.d.ts against TypeScript programs written as for node-pty (the
# compiler from npm, pinned by the lock file): they must compile under
# --strict, the lines of src/rejected.ts must not, and the compiled CommonJS
# and ES module programs run against the real sidecar.
TYPECHECK := node/typecheck
typecheck-node: build $(TYPECHECK)/node_modules/.ptyplex-installed
	cd $(TYPECHECK) && ln -sfn ../.. node_modules/ptyplex && rm -rf out && npx --no-install tsc -p .
	cd $(TYPECHECK) && for f in out/nodepty.js out/esm.mjs out/cjs.cjs; do \
		PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node $$f || exit 1; done
$(TYPECHECK)/node_modules/.ptyplex-installed: $(TYPECHECK)/package.json $(TYPECHECK)/package-lock.json
	cd $(TYPECHECK) && npm ci --no-audit --no-fund
	touch $@

NPM_PLATFORMS ?= linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64
npm:
	VERSION=$(VERSION) COMMIT=$(COMMIT) node/scripts/build-npm.sh dist/npm $(NPM_PLATFORMS)

npm-smoke:
	VERSION=$(VERSION) COMMIT=$(COMMIT) node/scripts/npm-smoke.sh

# node-pty is built from source against the system's Node headers, once;
# only the benchmarks need it (make bench's Node host rows, bench-node).
# Without a registry or a compiler make bench goes on and skips those rows.
node-pty:
	@cd node/bench && { [ -d node_modules/node-pty ] || npm_config_build_from_source=true npm install --nodedir=/usr --no-audit --no-fund || \
		echo "make: could not build node-pty in node/bench; the Node host rows will be skipped"; }

# bench-node: the npm package against node-pty. BENCHNODEFLAGS: --runs N --keys N --mib 1,8,32
BENCHNODEFLAGS ?=
bench-node: build node-pty
	cd node/bench && PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node bench.js $(BENCHNODEFLAGS)

demo: build
	$(GO) run ./examples/demo

clean:
	rm -rf $(BIN) dist

# --- Platforms (docs/platforms.md) ---
# What --version reports (internal/version).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/ptyplex/ptyplex/internal/version.Version=$(VERSION) \
	-X github.com/ptyplex/ptyplex/internal/version.Commit=$(COMMIT)

# The portable backend compiled in on Linux (ptyhost/backend_portable.go):
# the code macOS and FreeBSD run, tested here. It runs the tests that
# exercise the backend: ptyhost, the sidecar and the persistent server, the
# soak and fault tests, the client's tests of terminals' lives through the
# sidecar, and the session CLI's tests of programs' lives (exit codes,
# signals, stop, resize, input waits, programs). The rest of the suite does
# not touch the backend and ran in make test. Test binaries pass the tag on
# to the binaries they build.
PORTABLE := -tags ptyplex_portable
PORTABLE_PKGS   := ./ptyhost/... ./sidecar/... ./soak/
PORTABLE_CLIENT := ^Test(EchoRoundTrip|ExitCode|SignalDeath|OpenErrors|CreditBackpressure|RawMode|Resize|CloseEscalates|SidecarKilled|ConcurrentUse|CloseWaitsForExits|LargeWriteArrivesWhole|Persistent.*)$$
PORTABLE_CLI    := ^Test(ExitCodes|KillSignalNamesAndNumbers|Stop.*|ProgramSignalsStartAtDefaults|Resize|StartIsReady|WaitInput(Programs|Busy)|InputToProgramThatDoesNotRead|PythonREPL|VimEditAndSave|LessPaging|RunExitCodesAndOutputBash|SecuritySidecarNotDumpable|SecurityRestartedWatchdogNotDumpable)$$
test-portable: export PTYPLEX_TEST_OWNER := $(TEST_RUN)
test-portable: fmt-check
	$(GO) vet $(PORTABLE) ./...
	$(TESTENV) $(GO) test -race -count=1 -parallel $(TESTPARALLEL) -timeout 20m $(PORTABLE) $(PORTABLE_PKGS)
	$(TESTENV) $(GO) test -race -count=1 -parallel $(TESTPARALLEL) -timeout 20m $(PORTABLE) -run '$(PORTABLE_CLIENT)' ./client/
	$(TESTENV) $(GO) test -race -count=1 -parallel $(TESTPARALLEL) -timeout 20m $(PORTABLE) -run '$(PORTABLE_CLI)' ./cmd/ptyplex/
	scripts/leftovers.sh $(TEST_RUN)

# Vet and build everything for the platforms that are only built here.
# On Windows the test files of client and soak are left out of vet: their
# suites drive Unix PTYs and signals (the Windows ones are in ptyhost and
# cmd/ptyplex-sidecar, run by test-windows). The sidecar package's
# end-to-end files are built for Unix only; its in-process tests run on
# Windows too.
CROSS_TARGETS := darwin/amd64 darwin/arm64 freebsd/amd64 linux/arm64 windows/amd64 windows/arm64
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		echo "== $$t"; \
		pkgs=./...; \
		case $$t in windows/*) pkgs=$$(GOOS=windows $(GO) list ./... | grep -v -e '/client$$' -e '/soak$$');; esac; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet $$pkgs; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./...; \
	done

# The Windows build under Wine: the ConPTY backend's and the sidecar's
# tests and the npm package's under wine node.exe (scripts/test-windows.sh;
# the prefix and node.exe are cached in ~/.cache/ptyplex-wine).
test-windows:
	GO=$(GO) scripts/test-windows.sh

# The Windows benchmark row under Wine: one terminal's flood through
# ptyplex-sidecar.exe against a plain ConPTY read loop, same run (a ratio).
bench-windows:
	GO=$(GO) scripts/test-windows.sh bench

# Both commands for every target, static, into dist/OS-ARCH/.
RELEASE_TARGETS := linux/amd64 $(CROSS_TARGETS)
release:
	@set -e; for t in $(RELEASE_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; out=dist/$$os-$$arch; \
		echo "== $$out ($(VERSION), $(COMMIT))"; \
		mkdir -p $$out; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
			-o $$out/ ./cmd/ptyplex ./cmd/ptyplex-sidecar; \
	done

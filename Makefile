# ptyplex: build, test, benchmark, fuzz and demo targets.
# `make demo` runs the main job; `make test` runs the test suite.

GO       ?= go
BIN      := bin
FUZZTIME ?= 30s

.PHONY: test-node npm npm-smoke bench-node xtermjs
.PHONY: all build test vet fmt-check stress bench bench-quick fuzz fuzz-short soak soak-short demo clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The whole suite under the race detector, plus the static checks and the
# npm package's tests. The screen package's differential test needs
# xterm.js (installed by the xtermjs target); PTYPLEX_REQUIRE_XTERMJS makes
# it fail, not skip, without.
test: fmt-check vet xtermjs
	PTYPLEX_REQUIRE_XTERMJS=1 $(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) test-node

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

# One Markdown table of ptyplex against same-run baselines (see README,
# "Performance"); BENCHFLAGS=-quick for a smoke run, -only REGEXP to select.
BENCHFLAGS ?=
bench: build
	$(BIN)/ptyplex-bench -sidecar $(BIN)/ptyplex-sidecar -svg docs/bench.svg $(BENCHFLAGS)

bench-quick: build
	$(BIN)/ptyplex-bench -sidecar $(BIN)/ptyplex-sidecar -quick $(BENCHFLAGS)

# Every fuzz target in turn (go test fuzzes one target per run) for
# FUZZTIME each; crashers land in the package's testdata/fuzz/ and become
# regression inputs of plain `go test`. fuzz-short is the CI version.
FUZZ_TARGETS := proto:FuzzReadFrame proto:FuzzParseData proto:FuzzParseControl \
	sidecar:FuzzDispatch session:FuzzParseRequest screen:FuzzScreen
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
soak: build
	$(GO) test -count=1 -v -timeout $(SOAKTIME) ./soak/ -soak

soak-short:
	$(GO) test -race -count=1 -v ./soak/

# The npm package in node/ (see node/README.md): its tests against the
# built sidecar, the per-platform packages and their offline install test,
# and the benchmark against node-pty.
test-node: build
	cd node && PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node --test test/*.test.js test/*.test.mjs
	node/scripts/npm-smoke.sh

NPM_PLATFORMS ?= linux-x64 linux-arm64 darwin-x64 darwin-arm64
npm:
	node/scripts/build-npm.sh dist/npm $(NPM_PLATFORMS)

npm-smoke:
	node/scripts/npm-smoke.sh

# node-pty is built from source against the system's Node headers; it is
# needed by this benchmark only. BENCHNODEFLAGS: --runs N --keys N --mib 1,8,32
BENCHNODEFLAGS ?=
bench-node: build
	cd node/bench && { [ -d node_modules/node-pty ] || npm_config_build_from_source=true npm install --nodedir=/usr --no-audit --no-fund; }
	cd node/bench && PTYPLEX_SIDECAR_PATH=$(CURDIR)/$(BIN)/ptyplex-sidecar node bench.js $(BENCHNODEFLAGS)

demo: build
	$(GO) run ./examples/demo

clean:
	rm -rf $(BIN)

# ptyplex: build, test, benchmark, fuzz and demo targets.
# `make demo` runs the main job; `make test` runs the test suite.

GO       ?= go
BIN      := bin
FUZZTIME ?= 30s

.PHONY: all build test vet fmt-check stress bench bench-quick fuzz fuzz-short soak soak-short demo clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The whole suite under the race detector, plus the static checks.
test: fmt-check vet
	$(GO) test -race -count=1 -timeout 30m ./...

# Every package's tests, STRESS_COUNT rounds under -race, beside one busy
# loop per core (scripts/stress.sh). STRESS_PKGS narrows it.
STRESS_COUNT ?= 5
stress:
	STRESS_COUNT=$(STRESS_COUNT) scripts/stress.sh

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

demo: build
	$(GO) run ./examples/demo

clean:
	rm -rf $(BIN)

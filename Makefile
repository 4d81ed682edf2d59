# ptyplex: build, test, benchmark, fuzz and demo targets.
# `make demo` runs the main job; `make test` runs the test suite.

GO       ?= go
BIN      := bin
FUZZTIME ?= 30s

.PHONY: all build test vet fmt-check bench fuzz soak demo clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The whole suite under the race detector, plus the static checks.
test: fmt-check vet
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./sidecar/

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzScreen$$' -fuzztime $(FUZZTIME) ./screen/

demo: build
	$(GO) run ./examples/demo

clean:
	rm -rf $(BIN)

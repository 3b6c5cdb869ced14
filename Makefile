# adapterkit — the project's commands. `make demo` runs the main job, `make test` the tests.
GO          ?= go
STATICCHECK ?= $(shell command -v staticcheck 2>/dev/null || echo $(shell $(GO) env GOPATH)/bin/staticcheck)
STATICCHECK_VERSION ?= v0.8.2
BUILD       ?= $(CURDIR)/build
ADAPTERS    ?= $(BUILD)/adapters
FUZZTIME    ?= 5m
# Packages whose tests start real processes and share the machine: keep -p small so a
# 2-core box does not starve the timing-free but deadline-bounded process tests
# (-p 2: at most two test binaries at once, whatever the core count of the machine).
TESTFLAGS   ?= -race -count=1 -timeout 15m -p 2
# What each language SDK step skipped in this make run, for the summary line that ends
# `make demo` and `make test` (sdk/make.sh); emptied whenever make starts.
export ADAPTERKIT_SKIPLOG := $(BUILD)/sdk-skipped.txt
$(shell rm -f $(ADAPTERKIT_SKIPLOG))

.PHONY: all test vet lint cross unit demo adapters sdk-test bench-sdk bench bench-go bench-check fuzz soak tools clean api api-check layers systemd-verify test-windows image test-kubernetes

all: test

## test: everything CI checks: vet, staticcheck, cross-OS builds and vets, unit and e2e tests with -race.
test: vet lint cross api-check sdk-test unit bench-check test-windows
	@sdk/make.sh summary

vet:
	$(GO) vet ./...

## api: write the exported-API snapshot (api/*.txt, one file per library package) after a
## deliberate API change; api-check (part of `make test`) fails when the code differs from it.
api:
	$(GO) run ./internal/apisnap -w

api-check:
	$(GO) run ./internal/apisnap

## layers: the import-graph test (internal/layers, also run by `make test` with the other
## tests): a package importing a higher layer, or reaching a part the design rules out, fails it,
## and so does an order table placing an internal/ package above the shared layer or listing a
## directory that holds no package.
layers:
	$(GO) test -count=1 -run '^(TestImportGraph|TestCheck|TestInternalIsShared)$$' ./internal/layers/

lint: tools
	$(STATICCHECK) ./...

# The Windows and macOS code is checked by cross-compiling: build, vet and compile the tests.
cross:
	GOOS=windows GOARCH=amd64 $(GO) build ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(GO) build ./...
	GOOS=darwin GOARCH=arm64 $(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) test -c -o /dev/null ./platform/
	GOOS=darwin GOARCH=arm64 $(GO) test -c -o /dev/null ./platform/

## test-windows: the Windows test binaries (platform, lifecycle, registry, discovery, runtime,
## plugin, codec, internal/jsoncodec; built without -race) and adapterctl's check of the Go echo
## .exe, run under Wine in a throwaway prefix under $(BUILD)/wine-prefix
## (platform/testdata/wine/test-windows.sh); lists every assertion skipped because Wine differs
## from Windows. Skipped, saying so, where wine64 or x86_64-w64-mingw32-gcc is missing, unless
## ADAPTERKIT_REQUIRE_WINE is set (CI).
test-windows:
	@GO=$(GO) platform/testdata/wine/test-windows.sh $(BUILD)

# The e2e SDK tests (e2e/sdk_test.go) run against the SDK echo adapters `make adapters` built.
unit: adapters
	ADAPTERKIT_SDK_ADAPTERS=$(ADAPTERS) $(GO) test $(TESTFLAGS) ./...

## systemd-verify: `systemd-analyze verify` on contrib/systemd's unit files (also part of
## `make test`, as cmd/adapterctl's TestSystemdUnits); skipped, saying so, where
## systemd-analyze is not installed, unless ADAPTERKIT_REQUIRE_SYSTEMD_ANALYZE is set (CI).
systemd-verify:
	$(GO) test -count=1 -v -run '^TestSystemdUnits$$' ./cmd/adapterctl/

tools:
	@test -x "$(STATICCHECK)" || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## adapters: build the example adapters into $(ADAPTERS) under the discovery naming convention.
## The Go ones always; each SDK's echo adapter where its toolchain and dependencies are
## available, otherwise skipped with a line saying why and how to get it (sdk/make.sh).
adapters:
	@mkdir -p $(ADAPTERS)
	$(GO) build -o $(ADAPTERS)/thermometer_v1.0.0 ./examples/thermometer
	$(GO) build -o $(ADAPTERS)/echo_v1.2.0 ./examples/echo
	$(GO) build -o $(ADAPTERS)/console_v1.0.0 ./examples/console
	@sdk/make.sh build python $(ADAPTERS)
	@sdk/make.sh build typescript $(ADAPTERS)
	@sdk/make.sh build rust $(ADAPTERS)

## sdk-test: the tests of each language SDK, in its own language (sdk/), each skipped
## (and listed at the end of the run) where its toolchain or dependencies are missing.
sdk-test:
	@sdk/make.sh test python
	@sdk/make.sh test typescript
	@sdk/make.sh test rust

## demo: discover the example adapters, start them, call them, shut them down verified.
demo: adapters
	@mkdir -p $(BUILD)
	CGO_ENABLED=0 $(GO) build -o $(BUILD)/adapterctl ./cmd/adapterctl
	$(BUILD)/adapterctl list $(ADAPTERS)
	$(BUILD)/adapterctl inspect --dir $(ADAPTERS) thermometer
	$(BUILD)/adapterctl call -v --dir $(ADAPTERS) thermometer example.device.read '{"probe":"inlet"}'
	$(BUILD)/adapterctl check --dir $(ADAPTERS) echo
	@# The same echo service, written with each language SDK (sdk/) this machine could build.
	@for l in pyecho:python tsecho:typescript rsecho:rust; do n=$${l%%:*}; \
	  if [ -e $(ADAPTERS)/$${n}_v1.0.0 ]; then \
	    echo "+ adapterctl call --dir $(ADAPTERS) $$n example.echo.echo '{\"from\":\"$${l#*:}\"}'"; \
	    $(BUILD)/adapterctl call --dir $(ADAPTERS) $$n example.echo.echo "{\"from\":\"$${l#*:}\"}" || exit 1; \
	  else echo "$$n: not built on this machine (its SKIP: line above says why)"; fi; \
	done
	@# The control plane: a daemon keeps the adapters supervised; clients reach them over its socket.
	@set -e; sock=$(BUILD)/adapterd.sock; rm -f $$sock; \
	  $(BUILD)/adapterctl serve --socket $$sock $(ADAPTERS) & pid=$$!; \
	  trap 'kill -TERM $$pid 2>/dev/null || true' EXIT; \
	  for i in $$(seq 100); do [ -S $$sock ] && break; sleep 0.05; done; \
	  echo "+ adapterctl call --socket $$sock echo example.echo.echo '{\"via\":\"daemon\"}'"; \
	  $(BUILD)/adapterctl call --socket $$sock echo example.echo.echo '{"via":"daemon"}'; \
	  echo "+ adapterctl call --socket $$sock thermometer example.device.read '{\"probe\":\"inlet\"}'"; \
	  $(BUILD)/adapterctl call --socket $$sock thermometer example.device.read '{"probe":"inlet"}'; \
	  echo "+ adapterctl status --socket $$sock"; $(BUILD)/adapterctl status --socket $$sock; \
	  kill -TERM $$pid; wait $$pid; trap - EXIT
	$(GO) run ./examples/host -dir $(ADAPTERS)
	@sdk/make.sh summary

## bench: host hot-path benchmarks (allocations per call) and the cross-system bench tool
## (e2e/bench, its own module: adapterkit vs go-plugin net/rpc and gRPC vs a plain floor and
## the pipes' pingpong limit, in block and steady-state modes).
## BENCH_FLAGS passes flags to the tool, e.g. BENCH_FLAGS="-reps 3 -workloads rtt,par32"
## or BENCH_FLAGS="-runs 5" (five runs and a summary of the goals over them).
BENCH_FLAGS ?=
bench: bench-go
	@mkdir -p $(BUILD)
	cd e2e/bench && $(GO) run . -json -out $(BUILD)/bench.txt $(BENCH_FLAGS)

# The bench tool is its own module (go-plugin and gRPC stay out of the library's go.mod):
# keep it compiling, vetted and its own tests passing.
bench-check: tools
	cd e2e/bench && $(GO) vet ./... && $(STATICCHECK) ./... && $(GO) test -race -count=1 ./...

## bench-sdk: round trip p50 and 32-caller calls/s of each SDK echo against the Go echo.
bench-sdk: adapters
	ADAPTERKIT_SDK_ADAPTERS=$(ADAPTERS) $(GO) test -run='^$$' -bench=SDKEcho -benchtime=2s ./e2e/

bench-go:
	$(GO) test -run='^$$' -bench=. -benchmem ./runtime/ ./plugin/ ./lifecycle/ ./internal/jsoncodec/

## fuzz: run every fuzz target for $(FUZZTIME) each (CI runs only their seed corpora, in `make test`).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf $(BUILD)

## soak: the long load-and-faults run of e2e's TestSoak: 200,000 calls by default
## (ADAPTERKIT_SOAK_CALLS overrides), and 20 live upgrades under 16 callers through
## `adapterctl serve` (ADAPTERKIT_SOAK_UPGRADES overrides); `make test` runs short ones
## (5,000 calls, 3 upgrades).
soak:
	ADAPTERKIT_SOAK_CALLS=$${ADAPTERKIT_SOAK_CALLS:-200000} ADAPTERKIT_SOAK_UPGRADES=$${ADAPTERKIT_SOAK_UPGRADES:-20} \
	  $(GO) test -race -count=1 -timeout 30m -run '^(TestSoak|TestServeUpgradesUnderLoad)$$' -v ./e2e/

## image: the daemon's container image (Containerfile): a static adapterctl (CGO_ENABLED=0,
## its version set to $(VERSION), which the daemon reports and the image is tagged with)
## and the Go example adapters, FROM scratch, user 65532; tagged $(IMAGE):$(VERSION) and
## $(IMAGE):latest. PODMAN may name another builder taking podman's build flags (buildah bud).
PODMAN  ?= podman
IMAGE   ?= localhost/adapterkit/adapterd
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
image:
	rm -rf $(BUILD)/image
	mkdir -p $(BUILD)/image/rootfs/usr/local/bin $(BUILD)/image/rootfs/usr/local/lib/adapterkit/adapters \
	  $(BUILD)/image/rootfs/run/adapterkit $(BUILD)/image/rootfs/var/lib/adapterkit $(BUILD)/image/rootfs/tmp
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BUILD)/image/rootfs/usr/local/bin/adapterctl ./cmd/adapterctl
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BUILD)/image/rootfs/usr/local/lib/adapterkit/adapters/echo_v1.2.0 ./examples/echo
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BUILD)/image/rootfs/usr/local/lib/adapterkit/adapters/thermometer_v1.0.0 ./examples/thermometer
	cd $(BUILD)/image/rootfs && find . -type d -exec chmod 0755 {} + && chmod 0755 usr/local/bin/adapterctl usr/local/lib/adapterkit/adapters/* \
	  && chmod 1777 tmp && chmod 0700 run/adapterkit var/lib/adapterkit \
	  && find . -mindepth 1 ! -path ./run/adapterkit ! -path ./var/lib/adapterkit | sort \
	    | tar --numeric-owner --owner=0 --group=0 --no-recursion -cf ../root.tar -T - \
	  && tar --numeric-owner --owner=65532 --group=65532 --no-recursion -cf ../data.tar ./run/adapterkit ./var/lib/adapterkit
	$(PODMAN) build -f Containerfile --label org.opencontainers.image.version=$(VERSION) \
	  -t $(IMAGE):$(VERSION) -t $(IMAGE):latest $(BUILD)/image

## test-kubernetes: build the image, run contrib/kubernetes' manifests with `podman kube
## play` (throwaway CA), call an adapter through the published mutual-TLS port, scrape
## the metrics, kill the daemon and check that no adapter survives, tear down
## (e2e/kubernetes/test.sh). Skipped, saying how to get podman, where it is missing,
## unless ADAPTERKIT_REQUIRE_PODMAN is set (CI).
test-kubernetes:
	@GO=$(GO) PODMAN="$(PODMAN)" IMAGE=$(IMAGE) VERSION=$(VERSION) BUILD=$(BUILD) e2e/kubernetes/test.sh

# Targets for a fresh Debian/Ubuntu machine with Go installed. `make deps` installs what is missing
# (as root) or prints the command to run (otherwise); it neither starts the system Redis service nor
# leaves it enabled for the next boot.

GO ?= go

.PHONY: all deps race-deps demo test testwork check vet tidy staticcheck lint bench fuzz

all: test

# redis-server and redis-cli: the tests and the demo start their own throwaway redis-server
# processes on free loopback ports. rsvg-convert (librsvg2-bin): bench's chart test renders the
# charts with it. policy-rc.d keeps apt from starting the packaged service, and the
# package's enabling of it (systemd links made by its postinst) is undone after the install.
deps:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v redis-cli >/dev/null 2>&1 || missing="$$missing redis-cli"; \
	command -v rsvg-convert >/dev/null 2>&1 || missing="$$missing rsvg-convert"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "deps: missing$$missing; installing redis-server redis-tools librsvg2-bin (service not started)"; \
			rcd=""; \
			if [ ! -e /usr/sbin/policy-rc.d ]; then \
				printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && rcd=1; \
			fi; \
			status=0; \
			{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server redis-tools librsvg2-bin; } || status=$$?; \
			if [ -n "$$rcd" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
			if [ $$status = 0 ]; then \
				echo "deps: redis-server.service disabled (the package enables it for the next boot)"; \
				DPKG_MAINTSCRIPT_PACKAGE=redis-server deb-systemd-helper disable redis-server.service 2>/dev/null || \
					systemctl disable redis-server.service >/dev/null 2>&1 || true; \
			fi; \
			exit $$status; \
		else \
			echo "deps: missing$$missing; install it with:" >&2; \
			echo "    sudo apt-get install -y redis-server redis-tools librsvg2-bin" >&2; \
			exit 1; \
		fi; \
	fi

# go test -race needs cgo, hence a C compiler.
race-deps:
	@if ! command -v "$$($(GO) env CC)" >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "race-deps: no C compiler (needed by go test -race); installing gcc libc6-dev"; \
			apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y gcc libc6-dev; \
		else \
			echo "race-deps: go test -race needs a C compiler; install it with:" >&2; \
			echo "    sudo apt-get install -y gcc libc6-dev" >&2; \
			exit 1; \
		fi; \
	fi

demo: deps
	$(GO) run ./examples/flashsale -compare $(ARGS)

# The adapter modules under contrib/ (each a module of its own, so that the library's go.mod does not
# list Prometheus or OpenTelemetry): vet, lint and test run in each of them too.
CONTRIB = $(patsubst %/go.mod,%,$(wildcard contrib/*/go.mod))

vet:
	$(GO) vet ./...
	@for d in bench $(CONTRIB); do echo "cd $$d && $(GO) vet ./..."; (cd $$d && $(GO) vet ./...) || exit 1; done

# Development tools, pinned with tool directives in tools/go.mod (a module of their own, so that the
# library's go.mod lists only what the library needs); the go command fetches them on first use.
TOOL        = $(GO) tool -modfile=$(CURDIR)/tools/go.mod
STATICCHECK = $(TOOL) staticcheck

# tidy fails on an untidy module (go.mod/go.sum not what `go mod tidy` would write).
tidy:
	@for d in . tools bench $(CONTRIB); do echo "cd $$d && $(GO) mod tidy -diff"; (cd $$d && $(GO) mod tidy -diff) || exit 1; done

# staticcheck over the library, bench/ and contrib/.
staticcheck:
	@for d in . bench $(CONTRIB); do echo "cd $$d && staticcheck ./..."; (cd $$d && $(STATICCHECK) ./...) || exit 1; done

lint: tidy staticcheck

# The whole suite, with the race detector; gotestsum prints each test as it finishes, then a summary.
# The contrib modules' packages run in the same go test, through a workspace file made for it
# (.test.work, not committed), so that their builds overlap the library's tests. go test runs every
# vet check (-vet=all) on the race builds it makes anyway, and staticcheck then reads those builds
# too (GOFLAGS=-race): on a cold cache, one build of everything instead of three. bench/ (a module
# of its own too) is in the workspace for its tests, which draw its charts and render them (a few
# seconds; its benchmarks are `make bench`); staticcheck reads it in `make lint`.
TESTMODS = bench $(CONTRIB)
TESTWORK = $(CURDIR)/.test.work
TESTPKGS = ./... $(TESTMODS:%=./%/...)

testwork:
	@{ printf 'go 1.26.0\n\nuse (\n\t.\n'; for d in $(TESTMODS); do printf '\t./%s\n' $$d; done; printf ')\n'; } > $(TESTWORK)

# (GOWORK is set for gotestsum's go test only: `go tool -modfile` refuses workspace mode.)
test: deps race-deps testwork tidy
	gotestsum=$$($(TOOL) -n gotestsum) && GOWORK=$(TESTWORK) REDISTEST_REQUIRE=1 CGO_ENABLED=1 $$gotestsum \
		--format testname --format-hide-empty-pkg -- -race -vet=all -count=1 -parallel 6 -timeout 14m $(TESTPKGS)
	@for d in . $(CONTRIB); do echo "cd $$d && staticcheck ./..."; (cd $$d && CGO_ENABLED=1 GOFLAGS=-race $(STATICCHECK) ./...) || exit 1; done

# The fast tier for the edit loop: no Cluster or Sentinel topologies, no multi-process or long
# randomized runs (-short), still with the race detector.
check: deps race-deps testwork
	gotestsum=$$($(TOOL) -n gotestsum) && GOWORK=$(TESTWORK) REDISTEST_REQUIRE=1 CGO_ENABLED=1 $$gotestsum \
		--format pkgname -- -race -vet=all -short -count=1 -parallel 4 -timeout 5m $(TESTPKGS)

# The randomized, model-checked fault test for longer than its bounded run in `make test`.
# FUZZTIME is the run time; set SEED to replay a printed seed.
FUZZTIME ?= 10m
fuzz: deps race-deps
	REDISTEST_REQUIRE=1 CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 0 -run '^TestModel$$' . \
		-model.duration=$(FUZZTIME) $(if $(SEED),-model.seed=$(SEED))

bench: deps
	cd bench && $(GO) run . $(ARGS)

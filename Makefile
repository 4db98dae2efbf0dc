# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go

.PHONY: test setup setup-test image vet unit cases-check demo bench graph

# Both set-up commands install what a fresh Debian machine lacks: mmdebstrap
# (to bootstrap the sandbox image without a registry), and for the tests
# Debian's chromium (the HTML report is checked in a real browser) and
# OpenSSH's server (the sandbox conformance suite reaches an engine over
# ssh://; the tests start their own sshd, none is left running).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL = $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq

setup:
	@command -v mmdebstrap >/dev/null || { $(SUDO) apt-get update -qq && $(APT_INSTALL) mmdebstrap; }

setup-test: setup
	@command -v chromium >/dev/null || { $(SUDO) apt-get update -qq && $(APT_INSTALL) chromium; }
	@test -x /usr/sbin/sshd || { $(SUDO) apt-get update -qq && $(APT_INSTALL) openssh-server; }

test: setup-test image vet unit cases-check

image: setup
	$(GO) run ./cmd/evalctl image build

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1)
	$(GO) vet ./...

# Sandbox, grader and orchestrator tests run real containers on the engine;
# EVALCTL_LONG_TESTS=1 turns on the long integration tests that a plain
# 'go test ./...' skips (sandboxtest.Long).
# The longest packages are named first, so that go test starts them first
# and the short ones fill the other slot around them, instead of one long
# package running alone at the end (go list keeps the first mention of a
# package; ./... adds the rest). docs/performance.md has their times.
SLOW_FIRST := ./orchestrator ./grader ./grader/controls ./orchestrator/demo ./sandbox ./cmd/evalctl

unit:
	EVALCTL_LONG_TESTS=1 $(GO) test -race -count=1 -timeout 75m -p 2 $(SLOW_FIRST) ./...

# The fixture gate over the whole development suite. Three grades at once on
# the two cores: much of a grade waits on the engine (docs/performance.md).
cases-check:
	$(GO) run ./cmd/evalctl cases check --suite cases --concurrency 3

demo: setup
	$(GO) run ./cmd/evalctl demo

bench:
	$(GO) test -run XXX -bench . -benchtime 50x ./sandbox/

# The package graph in docs/layout.md, docs/packages.md and docs/architecture.md, from go list.
graph:
	$(GO) generate .

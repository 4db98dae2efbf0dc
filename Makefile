# The README's test command is `make test`; .ci/run calls exactly that.
GO ?= go

.PHONY: test image vet unit cases-check demo bench

test: image vet unit cases-check

image:
	$(GO) run ./cmd/evalctl image build

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo 'gofmt: files above need formatting'; exit 1)
	$(GO) vet ./...

# Sandbox, grader and orchestrator tests run real containers on the engine.
unit:
	$(GO) test -race -count=1 -timeout 75m -p 2 ./...

# The fixture gate over the whole development suite.
cases-check:
	$(GO) run ./cmd/evalctl cases check --suite cases --concurrency 2

demo:
	$(GO) run ./cmd/evalctl demo

bench:
	$(GO) test -run XXX -bench . -benchtime 50x ./sandbox/

# CodecSessions — the README's commands.
SWIFT ?= swift
QUICK ?=
FUZZ_SECONDS ?= 30

.PHONY: all build demo test lint format bench bench-gate fuzz fuzz-smoke sanitize leakcheck soak soak-hostile soak-hostile-whep docs bootstrap clean

all: build

bootstrap:
	./scripts/bootstrap

build: bootstrap
	$(SWIFT) build

demo: bootstrap
	$(SWIFT) build -c release --product codecs
	$$($(SWIFT) build -c release --show-bin-path)/codecs demo

test: bootstrap lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) fuzz-smoke

# Every libFuzzer target built and run for a few seconds (part of `make test`,
# so a harness that no longer builds or an input that crashes fails CI).
FUZZ_SMOKE_SECONDS ?= 5
fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) ./scripts/fuzz

lint:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format Package.swift Sources Tests Examples Benchmarks
	./scripts/doc-snippets --check

# The documentation's ```swift snippets into Tests/DocSnippetTests (compiled by
# `swift build --build-tests`); run after changing a snippet or an API.
.PHONY: doc-snippets
doc-snippets:
	./scripts/doc-snippets

format:
	$(SWIFT) format --in-place --recursive --configuration .swift-format Package.swift Sources Tests Examples Benchmarks

bench: bootstrap
	$(SWIFT) build -c release --product codecs-bench
	$(SWIFT) build -c release --product codecs
	$$($(SWIFT) build -c release --show-bin-path)/codecs-bench $(if $(QUICK),--quick,) $(ARGS)

# Instruction counts of the gate's regions under callgrind against
# bench/gate-baseline.json: exit 1 on a count more than 2 % above it
# (GATE_TOLERANCE=PERCENT to change); UPDATE=1 rewrites the baseline.
bench-gate: bootstrap
	UPDATE="$(UPDATE)" SWIFT="$(SWIFT)" ./scripts/bench-gate

# Reliability (not part of `make test`; see the README's "Reliability").
# The test suite under AddressSanitizer and ThreadSanitizer (SANITIZER=address
# or thread for one; SANITIZE_FILTER='FormatConvTests|...' for some suites).
SANITIZER ?= all
SANITIZE_FILTER ?=
sanitize: bootstrap
	SANITIZE_FILTER="$(SANITIZE_FILTER)" ./scripts/sanitize $(SANITIZER)

# codecs demo under valgrind: zero definitely-lost bytes, no LiveObjects left.
leakcheck: bootstrap
	./scripts/leakcheck

# `codecs stream receive rtp://` stopped 50 times by a duplicated SIGINT (to
# the process and its group): prints "complete: K of 50", exit 1 unless all
# are (DOUBLE_SIGNAL_RUNS, DOUBLE_SIGNAL=TERM to change; see the script).
DOUBLE_SIGNAL_RUNS ?= 50
DOUBLE_SIGNAL ?= INT
.PHONY: double-signal-check
double-signal-check: bootstrap
	$(SWIFT) build --product codecs
	CODECS="$$($(SWIFT) build --show-bin-path)/codecs" ./scripts/double-signal-check $(DOUBLE_SIGNAL_RUNS) $(DOUBLE_SIGNAL)

# A long codecs demo with its RSS sampled every second: flat after warm-up
# (SOAK_FRAMES, SOAK_SIZE, SOAK_SECONDS; see scripts/soak).
soak: bootstrap
	./scripts/soak

# 200 hostile connections beside one real viewer of `codecs stream serve --http`
# for 60 s: every frame equal to FFmpeg's framemd5, VmRSS under 256 MB
# (SOAK_SECONDS, SOAK_CONNECTIONS; see scripts/soak-hostile).
soak-hostile: bootstrap
	./scripts/soak-hostile

# The same for `codecs stream serve --whep --token-file`: 200 hostile workers
# of mixed kinds (idle and slow HTTP, offers without the token, guessed session
# URLs, junk datagrams and STUN at the media port) beside one aiortc viewer
# for 60 s (SOAK_SECONDS, SOAK_CONNECTIONS; see scripts/soak-hostile-whep);
# WHIP=1: against `codecs stream receive whip://` beside our publisher.
WHIP ?=
soak-hostile-whep: bootstrap
	./scripts/soak-hostile-whep $(if $(WHIP),--whip,)

# DocC documentation of the public modules, without the DocC plugin: symbol
# graphs from the compiler, one archive per module from the toolchain's docc
# (each module's catalog, Sources/<Module>/<Module>.docc, when it has one),
# then one combined archive. Any docc warning fails (--warnings-as-errors).
# Every library module: one listed that is not in the package (yet) is skipped
# with a line saying so, so Sockets and LiveStreaming need no change here.
DOCC ?= $(shell command -v docc 2>/dev/null || echo "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/docc")
DOC_MODULES = MediaCore FormatConv RTPPayload EncodeSession DecodeSession PixelTransfer MediaIO Sockets WebStreaming WebRTC \
	LiveStreaming CongestionControl
DOCS_BUILD = .build/docs-build
DOCS_OUT = .build/docs

docs: bootstrap
	$(SWIFT) build --scratch-path $(DOCS_BUILD) --product codecs \
		-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build/symbol-graphs
	rm -rf $(DOCS_OUT) && mkdir -p $(DOCS_OUT)
	for module in $(DOC_MODULES); do \
		if [ ! -f .build/symbol-graphs/$$module.symbols.json ]; then echo "docs: no module $$module, skipped"; continue; fi; \
		graphs=$(DOCS_OUT)/symbol-graphs/$$module; mkdir -p $$graphs; \
		cp .build/symbol-graphs/$$module.symbols.json $$graphs/; \
		cp .build/symbol-graphs/$$module@*.symbols.json $$graphs/ 2>/dev/null || true; \
		catalog=Sources/$$module/$$module.docc; [ -d $$catalog ] || catalog=; \
		"$(DOCC)" convert $$catalog --additional-symbol-graph-dir $$graphs --warnings-as-errors \
			--fallback-display-name $$module --fallback-bundle-identifier org.codecsessions.$$module \
			--output-path $(DOCS_OUT)/$$module.doccarchive || exit 1; \
	done
	"$(DOCC)" merge $$(ls -d $(foreach module,$(DOC_MODULES),$(DOCS_OUT)/$(module).doccarchive) 2>/dev/null) \
		--synthesized-landing-page-name CodecSessions --output-path $(DOCS_OUT)/CodecSessions.doccarchive
	@echo "docs: $(DOCS_OUT)/CodecSessions.doccarchive (per module: $(DOCS_OUT)/<Module>.doccarchive)"

# libFuzzer targets in Fuzz/, each run for FUZZ_SECONDS (scripts/fuzz).
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz

clean:
	rm -rf .build

# CodecSessions — the README's commands.
SWIFT ?= swift
QUICK ?=

.PHONY: all build demo test lint format bench fuzz sanitize docs bootstrap clean

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

lint:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format Package.swift Sources Tests Examples Benchmarks

format:
	$(SWIFT) format --in-place --recursive --configuration .swift-format Package.swift Sources Tests Examples Benchmarks

bench: bootstrap
	$(SWIFT) build -c release --product codecs-bench
	$$($(SWIFT) build -c release --show-bin-path)/codecs-bench $(if $(QUICK),--quick,)

# DocC documentation of the public modules, without the DocC plugin: symbol
# graphs from the compiler, one archive per module from the toolchain's docc
# (catalogs in Documentation/), then one combined archive.
DOCC ?= $(shell command -v docc 2>/dev/null || echo "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/docc")
DOC_MODULES = MediaCore FormatConv EncodeSession DecodeSession PixelTransfer MediaIO
DOCS_BUILD = .build/docs-build
DOCS_OUT = .build/docs

docs: bootstrap
	$(SWIFT) build --scratch-path $(DOCS_BUILD) --product codecs \
		-Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc $(CURDIR)/.build/symbol-graphs
	rm -rf $(DOCS_OUT) && mkdir -p $(DOCS_OUT)
	for module in $(DOC_MODULES); do \
		graphs=$(DOCS_OUT)/symbol-graphs/$$module; mkdir -p $$graphs; \
		cp .build/symbol-graphs/$$module.symbols.json $$graphs/; \
		cp .build/symbol-graphs/$$module@*.symbols.json $$graphs/ 2>/dev/null || true; \
		"$(DOCC)" convert Documentation/$$module.docc --additional-symbol-graph-dir $$graphs \
			--fallback-display-name $$module --fallback-bundle-identifier org.codecsessions.$$module \
			--output-path $(DOCS_OUT)/$$module.doccarchive || exit 1; \
	done
	"$(DOCC)" merge $(foreach module,$(DOC_MODULES),$(DOCS_OUT)/$(module).doccarchive) \
		--synthesized-landing-page-name CodecSessions --output-path $(DOCS_OUT)/CodecSessions.doccarchive
	@echo "docs: $(DOCS_OUT)/CodecSessions.doccarchive (per module: $(DOCS_OUT)/<Module>.doccarchive)"

clean:
	rm -rf .build

# CodecSessions — the README's commands.
SWIFT ?= swift
QUICK ?=
FUZZ_SECONDS ?= 30

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

# libFuzzer targets in Fuzz/, each run for FUZZ_SECONDS (scripts/fuzz).
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz

clean:
	rm -rf .build

# Thin wrappers around scripts/ and CMake; see README.md.
.PHONY: deps models build test check demo bench bench-peer clean

deps:
	scripts/install-deps

models:
	scripts/get-models

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C build

# The main job: the quick paper suite on the default model, and its report.
demo: build models
	build/eventkv suite --quick -m models/smollm2-135m-instruct-q4_1.gguf --db results/demo.db \
	  -o results/report.html --markdown results/report.md

# Installs, fetches every model, builds and runs every test and check.
check:
	scripts/check

test: check

bench: build
	build/eventkv_bench

# eventkv against llama.cpp (llama-bench built natively from the pinned
# llama-cpp-python sdist), alternating, on every model in models/.
bench-peer: build
	bench/peer/build-llama-bench >/dev/null
	bench/peer/run --json build/peer/results.json

clean:
	rm -rf build build-asan

# Thin wrappers around scripts/ and CMake; see README.md.
.PHONY: deps models build test check demo demo-quick bench bench-peer clean

deps:
	scripts/install-deps

models:
	scripts/get-models

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C build

# The main job: a headline cell of the paper on Qwen2.5-Coder-1.5B, where
# the effect lands (the carrier right after the source, 20 donor pairs under
# the five conditions), and its report. Builds the binary alone.
DEMO_MODEL = models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
demo: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C build eventkv
	scripts/get-models qwen2.5-coder-1.5b
	rm -f results/demo.db
	build/eventkv probe scenarios/paper/distance.json --distances 0 --pairs 20 -m $(DEMO_MODEL) \
	  --db results/demo.db
	build/eventkv report --db results/demo.db -o results/report.html --markdown results/report.md

# Every experiment of the paper at 6 pairs a cell on the default model
# (SmolLM2-135M, too small to carry the value), with the landing analysis.
demo-quick: build models
	build/eventkv suite --quick -m models/smollm2-135m-instruct-q4_1.gguf --db results/demo-quick.db \
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

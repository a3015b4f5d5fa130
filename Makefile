# Thin wrappers around scripts/ and CMake; see README.md.
.PHONY: deps models build test check demo bench clean

deps:
	scripts/install-deps

models:
	scripts/get-models

build: deps
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
	ninja -C build

# The main job: the default real model, fetched and inspected.
demo: build models
	build/eventkv inspect models/smollm2-135m-instruct-q4_1.gguf

# Installs, fetches every model, builds and runs every test and check.
check:
	scripts/check

test: check

bench: build
	build/eventkv_bench

clean:
	rm -rf build build-asan

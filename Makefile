# The two commands of the README. Both configure and build on first use.
#   make demo   build, then run `topk select` on a built-in vector (GPU if present, else CPU)
#   make test   build, then run every test (GPU tests report "Not Run" without a GPU)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all build demo test clean
all: build

GENERATOR := $(if $(shell command -v ninja),Ninja,Unix Makefiles)

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/topk select

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)

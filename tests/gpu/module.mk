# tests/gpu — checks and measurements that need a real GPU (run by `make gpu-test` and
# `make gpu-facts`, not by `make test`). Built with nvcc against the real driver;
# tests/gpu/run.sh skips them cleanly without one.
#
#   make gpu-facts             vmm_handles: what VMM calls, remaps (1-4 threads), a launch
#                              beside a remapping thread, managed-memory prefetches and copies
#                              cost the host; JSON lines and markdown tables (estimated: under a
#                              minute; 240 s at most)
#   make gpu-test              vmm_facts, then tests/gpu/torch_budget.sh (PyTorch jobs)
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_TESTS := $(BUILD)/gpu/vmm_facts
GPU_FACTS := $(BUILD)/gpu/vmm_handles
# torch_budget.sh's logs, traces and JSON lines (a fresh temporary folder when empty)
GPU_OUT ?=
# The second PyTorch workload: a transformer encoder under bf16 autocast, eager and compiled.
GPU_TRANSFORMER := --model transformer --layers 6 --width 1024 --seq 512 --batch 16 --steps 30

$(BUILD)/gpu/%: tests/gpu/%.cu tests/gpu/gpu_check.h
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -arch=native -o $@ $< -lcuda -ldl -lpthread 2>/dev/null || \
		$(NVCC) -O2 -gencode arch=compute_90,code=sm_90 -o $@ $< -lcuda -ldl -lpthread

# One run of at most 4 minutes (the program's own watchdog stops it at 200 s).
.PHONY: gpu-facts
gpu-facts: $(GPU_FACTS)
	timeout -k 10 240 tests/gpu/run.sh $(GPU_FACTS)

.PHONY: gpu-test
gpu-test: $(GPU_TESTS) $(BUILD)/libshim.so $(BUILD)/shim-report
	tests/gpu/run.sh $(GPU_TESTS)
	BUILD=$(BUILD) tests/gpu/torch_budget.sh $(GPU_OUT)
	BUILD=$(BUILD) TORCH_NAME=tf- TORCH_ALLOCS=async TORCH_ARGS="$(GPU_TRANSFORMER)" \
		tests/gpu/torch_budget.sh $(GPU_OUT)
	BUILD=$(BUILD) TORCH_NAME=tfc- TORCH_ALLOCS=async TORCH_BUDGETS=75 \
		TORCH_ARGS="$(GPU_TRANSFORMER) --compile" tests/gpu/torch_budget.sh $(GPU_OUT)

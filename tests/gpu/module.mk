# tests/gpu — checks and measurements that need a real GPU (run by `make gpu-test` and
# `make gpu-facts`, not by `make test`). Built with nvcc against the real driver;
# tests/gpu/run.sh skips them cleanly without one.
#
#   make gpu-facts             vmm_handles: what VMM calls, remaps (1-4 threads), a launch
#                              beside a remapping thread, managed-memory prefetches and copies
#                              cost the host; JSON lines and markdown tables (estimated: under a
#                              minute; 240 s at most)
#   make gpu-test              vmm_facts, then tests/gpu/torch_budget.sh: the MLP with both
#                              allocators, the transformer eager, then compiled (estimated: 10
#                              minutes)
#   make gpu-test GPU_QUICK=1  vmm_facts, the MLP with cudaMallocAsync only (native, save_on_cpu,
#                              libshim at its default budget, 75% and 50%), the eager transformer
#                              the same at 75% only (estimated: 4 minutes)
#
# On a lent GPU machine, both in one go, within 10 minutes of device time (estimated, builds
# included; DIR keeps the output, and the PyTorch runs' JSON lines, logs and traces):
#   mkdir -p DIR && make -j16 build/libshim.so build/shim-report build/gpu/vmm_facts \
#       build/gpu/vmm_handles && { make gpu-facts; make gpu-test GPU_QUICK=1 GPU_OUT=DIR/torch; } \
#       2>&1 | tee DIR/gpu.txt
# (";": a failed figure does not cost the PyTorch rows). Without PyTorch, torch_budget.sh prints
# a skip line.
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_TESTS := $(BUILD)/gpu/vmm_facts
GPU_FACTS := $(BUILD)/gpu/vmm_handles
# torch_budget.sh's logs, traces and JSON lines (a fresh temporary folder when empty)
GPU_OUT ?=
GPU_QUICK ?=
# The second PyTorch workload: a transformer encoder under bf16 autocast, eager and compiled.
GPU_TRANSFORMER := --model transformer --layers 6 --width 1024 --seq 512 --batch 16 --steps 30
GPU_MLP_ALLOCS = $(if $(filter 1,$(GPU_QUICK)),async,async caching)
GPU_TRANSFORMER_BUDGETS = $(if $(filter 1,$(GPU_QUICK)),75,75 50)
# save_on_cpu is not run compiled: its hooks are an eager-mode tool.
GPU_COMPILED = BUILD=$(BUILD) TORCH_NAME=tfc- TORCH_ALLOCS=async TORCH_BUDGETS=75 \
	TORCH_SAVE_ON_CPU=0 TORCH_ARGS="$(GPU_TRANSFORMER) --compile" tests/gpu/torch_budget.sh $(GPU_OUT)

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
	BUILD=$(BUILD) TORCH_ALLOCS="$(GPU_MLP_ALLOCS)" tests/gpu/torch_budget.sh $(GPU_OUT)
	BUILD=$(BUILD) TORCH_NAME=tf- TORCH_ALLOCS=async TORCH_BUDGETS="$(GPU_TRANSFORMER_BUDGETS)" \
		TORCH_ARGS="$(GPU_TRANSFORMER)" tests/gpu/torch_budget.sh $(GPU_OUT)
	$(if $(filter 1,$(GPU_QUICK)),,$(GPU_COMPILED))

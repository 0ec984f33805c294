# tests/gpu — checks that need a real GPU (run by `make gpu-test`, not by `make test`).
# Built with nvcc against the real driver; tests/gpu/run.sh skips them cleanly without one.
NVCC ?= $(CUDA_HOME)/bin/nvcc
GPU_TESTS := $(BUILD)/gpu/vmm_facts
# torch_budget.sh's logs, traces and JSON lines (a fresh temporary folder when empty)
GPU_OUT ?=
# The second PyTorch workload: a transformer encoder under bf16 autocast, eager and compiled.
GPU_TRANSFORMER := --model transformer --layers 6 --width 1024 --seq 512 --batch 16 --steps 30

$(BUILD)/gpu/%: tests/gpu/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -arch=native -o $@ $< -lcuda -ldl 2>/dev/null || \
		$(NVCC) -O2 -gencode arch=compute_90,code=sm_90 -o $@ $< -lcuda -ldl

.PHONY: gpu-test
gpu-test: $(GPU_TESTS) $(BUILD)/libshim.so $(BUILD)/shim-report
	tests/gpu/run.sh $(GPU_TESTS)
	BUILD=$(BUILD) tests/gpu/torch_budget.sh $(GPU_OUT)
	BUILD=$(BUILD) TORCH_NAME=tf- TORCH_ALLOCS=async TORCH_ARGS="$(GPU_TRANSFORMER)" \
		tests/gpu/torch_budget.sh $(GPU_OUT)
	BUILD=$(BUILD) TORCH_NAME=tfc- TORCH_ALLOCS=async TORCH_BUDGETS=75 \
		TORCH_ARGS="$(GPU_TRANSFORMER) --compile" tests/gpu/torch_budget.sh $(GPU_OUT)

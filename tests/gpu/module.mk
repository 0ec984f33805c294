# tests/gpu — checks and measurements that need a real GPU (run by `make gpu-check`,
# `make gpu-test` and `make gpu-facts`, not by `make test`). Built with nvcc against the real
# driver; each skips cleanly without one.
#
#   make gpu-check             the one command a session with a GPU runs first: at most 8
#                              minutes on an H100 or H200, builds included (tests/gpu/gpu_check.sh
#                              says what it runs). Writes to its results folder, out below
#                              (GPU_CHECK_OUT: the device machine's $OUT when set, else
#                              $(BUILD)/gpu-check): out/gpu-check.md (a table per part, with
#                              the card named, to paste into tests/bench/RESULTS-gpu.md),
#                              gpu-check.log and the runs' files (gpu-check-runs.tar.gz,
#                              gpu-check-traces.tar). Here, without a GPU: "no GPU: nothing
#                              measured", exit status 0 (the CUDA programs are still compiled).
#                              GPU_CHECK_PARTS="2 3" runs only those parts; GPU_CHECK_COMMIT=HASH
#                              names the commit in the header (the device machine has no .git).
#
# The simulated twins' predictions, read by make gpu-check from GPU_TWINS when that file exists
# (else "n/a" beside every figure): plain text, a line per prediction,
#     JOB<TAB>CASE<TAB>RATIO
# JOB: mlp, transformer (eager), mlp-graphs, transformer-graphs (torch.compile reduce-overhead),
# mlp-expandable, transformer-expandable (expandable_segments:True); CASE: default (libshim's
# default budget), 75 or 50 (that share of the native peak), soc (the budget at save_on_cpu's
# peak), save-on-cpu (save_on_cpu natively, no libshim); RATIO: the predicted median step time
# against the native one (2.52 for 2.52x). Lines starting with "#" and empty lines are skipped;
# a malformed line is named (file and line) in the results and left out.
# The one test make test runs here (seconds, no GPU): make gpu-check's tables from a folder
# written by hand, and the command on a machine without a driver.
TESTS += tests/gpu/test_gpu_check.sh
GPU_TWINS ?= tests/bench/twin-predictions.tsv
GPU_CHECK_OUT ?= $(if $(OUT),$(OUT),$(BUILD)/gpu-check)
GPU_CHECK_PARTS ?= 1 2 3
GPU_CHECK_COMMIT ?=
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

# No prerequisite needs nvcc or a GPU: the script compiles the CUDA programs itself (a missing
# nvcc or a failed compile is a line in its output, not the end of the command).
.PHONY: gpu-check
gpu-check: $(BUILD)/libshim.so $(BUILD)/shim-report
	BUILD=$(BUILD) SAN=$(SAN) NVCC=$(NVCC) MAKE=$(MAKE) GPU_TWINS=$(GPU_TWINS) \
		GPU_CHECK_OUT=$(GPU_CHECK_OUT) GPU_CHECK_PARTS="$(GPU_CHECK_PARTS)" \
		GPU_CHECK_COMMIT="$(GPU_CHECK_COMMIT)" GPU_CHECK_TRANSFORMER="$(GPU_TRANSFORMER)" \
		tests/gpu/gpu_check.sh

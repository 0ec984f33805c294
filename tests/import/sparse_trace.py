#!/usr/bin/env python3
"""tests/import/sparse_trace.py — writes a small hand-made execution trace (older layout) and
the Kineto trace of the same step, for test_import_sparse.sh: an FBGEMM table-batched embedding
lookup (2 tables of 8 floats a row, 300 indices) with its fused Adagrad backward
(CppNode<SplitLookupFunction_adagrad_Op>, whose zeros_like/fill_ child launches a kernel of its
own), an aten::embedding_bag (50 indices into a [500, 10] table) and an aten::mm.

usage: sparse_trace.py ET_OUT KINETO_OUT TOTAL_D   (16: both tables 8 wide; 12: mixed widths)"""
import json
import sys

et_out, kineto_out, total_d = sys.argv[1], sys.argv[2], int(sys.argv[3])
SCHEMA = ("fbgemm::split_embedding_codegen_lookup_adagrad_function(Tensor placeholder_autograd_tensor, "
          "Tensor dev_weights, Tensor uvm_weights, Tensor lxu_cache_weights, Tensor weights_placements, "
          "Tensor weights_offsets, Tensor D_offsets, int total_D, int max_D, Tensor hash_size_cumsum, "
          "int total_hash_size_bits, Tensor indices, Tensor offsets, int pooling_mode, "
          "Tensor? indice_weights, Tensor? feature_requires_grad, Tensor lxu_cache_locations, "
          "bool gradient_clipping, float max_gradient, bool stochastic_rounding, Tensor momentum1_dev, "
          "Tensor momentum1_uvm, Tensor momentum1_placements, Tensor momentum1_offsets, float eps=0., "
          "float learning_rate=0., int output_dtype=0) -> Tensor")
EB_SCHEMA = ("aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, "
             "bool scale_grad_by_freq=False, int mode=0, bool sparse=False, "
             "Tensor? per_sample_weights=None, bool include_last_offset=False) -> "
             "(Tensor, Tensor, Tensor, Tensor)")


def t(tid, sid, numel, size):
    return [tid, sid, 0, numel, size, "cuda:0"]


def node(nid, rf, name, tid, inputs, outputs=(), parent=0, seq=-1, fw_parent=0, schema="",
         shapes=None):
    return {"name": name, "id": nid, "rf_id": rf, "parent": parent, "fw_parent": fw_parent,
            "seq_id": seq, "tid": tid, "op_schema": schema, "inputs": list(inputs),
            "input_shapes": shapes or [[] for _ in inputs], "outputs": list(outputs)}


tbe_in = [t(2, 101, 0, 4), t(3, 200, 1000000, 4), t(4, 101, 0, 4), t(5, 101, 0, 4),
          t(6, 201, 2, 4), t(7, 202, 2, 8), t(8, 203, 3, 4), total_d, 8, t(9, 204, 3, 8), 20,
          t(10, 205, 300, 8), t(11, 206, 9, 8), 0, "<None>", "<None>", t(12, 101, 0, 4), False,
          1.0, True, t(13, 207, 1000000, 4), t(14, 101, 0, 4), t(15, 208, 2, 4),
          t(16, 209, 2, 8), 0.0, 0.005, 0]
nodes = [
    node(10, 10, "aten::to", 1, [t(1, 100, 4, 8)], [t(1, 100, 4, 8)], seq=7),
    node(11, 11, "fbgemm::split_embedding_codegen_lookup_adagrad_function", 1, tbe_in,
         [t(17, 210, 64, 4)], schema=SCHEMA),
    node(12, 12, "aten::embedding_bag", 1, [t(20, 300, 5000, 4), t(21, 301, 50, 8), t(22, 302, 11, 8),
         False, 0, False, "<None>", False], [t(23, 303, 100, 4)], seq=8, schema=EB_SCHEMA,
         shapes=[[500, 10], [50], [11], [], [], [], [], []]),
    node(13, 13, "aten::mm", 1, [t(30, 400, 100, 4), t(31, 401, 100, 4)], [t(32, 402, 100, 4)],
         seq=9),
    node(20, 20, "torch::autograd::CppNode<SplitLookupFunction_adagrad_Op>", 2,
         [t(40, 210, 64, 4)], seq=7, fw_parent=5),
    node(21, 21, "aten::zeros_like", 2, [t(40, 210, 64, 4)], [t(41, 500, 64, 4)], parent=20),
    node(22, 22, "aten::fill_", 2, [t(41, 500, 64, 4), 0], [t(41, 500, 64, 4)], parent=21),
]
json.dump({"schema": "1.0.1", "nodes": nodes}, open(et_out, "w"), indent=0)

# Kineto: the same operators on two threads, each launching its kernels.
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 300,
       "tid": 1}]
ops = [(1, "aten::to", 10, 10, ["k_to"]), (1, SCHEMA.split("(")[0], 20, 20, ["k_fwd"]),
       (1, "aten::embedding_bag", 40, 10, ["k_eb"]), (1, "aten::mm", 50, 10, ["k_mm"]),
       (2, "torch::autograd::CppNode<SplitLookupFunction_adagrad_Op>", 100, 40, []),
       (2, "aten::zeros_like", 110, 10, []), (2, "aten::fill_", 111, 8, ["k_fill"])]
for tid, name, ts, dur, _ in ops:
    ev.append({"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": dur, "tid": tid})
launches = [(1, 12, "k_to"), (1, 25, "k_fwd"), (1, 45, "k_eb"), (1, 55, "k_mm"),
            (2, 105, "k_bwd1"), (2, 112, "k_fill"), (2, 130, "k_bwd2")]
for corr, (tid, ts, kname) in enumerate(launches, 1):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts, "dur": 1,
               "tid": tid, "args": {"correlation": corr}})
    ev.append({"ph": "X", "cat": "kernel", "name": kname, "ts": ts + 2, "dur": 3,
               "args": {"stream": 7, "correlation": corr, "device": 0}})
json.dump({"traceEvents": ev}, open(kineto_out, "w"), indent=0)

"""Write the two one-node ONNX graphs through which :mod:`cloud_edge_privacy.detection.products` runs the spaCy
models' layer products in ONNX Runtime, in ``src/cloud_edge_privacy/detection/``:

* ``products.onnx``: ``Y = X @ W.T`` (``Gemm``, ``transB=1``, float32, any sizes);
* ``window_block_int8.onnx``: one residual block of a window encoder, its product in int8
  (``DynamicQuantizeMatMul``: ``X`` is quantized to uint8 as it comes; see :func:`window_block_graph_bytes`).

No weights: each graph takes its matrices as inputs (the block's few constants are shapes).  Deterministic (the same bytes on every run).  Needs the
``[encoder-train]`` extra (onnx).

    .venv/bin/python scripts/make_products_graph.py [--dir DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

DIR = Path(__file__).resolve().parents[1] / "src" / "cloud_edge_privacy" / "detection"


def graph_bytes() -> bytes:
    """The serialized model: inputs X (M x K) and W (N x K), output Y (M x N); opset 13, IR version 8."""
    from onnx import TensorProto, checker, helper

    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["M", "K"])
    w = helper.make_tensor_value_info("W", TensorProto.FLOAT, ["N", "K"])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", "N"])
    graph = helper.make_graph([helper.make_node("Gemm", ["X", "W"], ["Y"], transB=1)], "products", [x, w], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="cloud-edge-privacy")
    model.ir_version = 8
    checker.check_model(model)
    return model.SerializeToString()


def window_block_graph_bytes() -> bytes:
    """One residual block of a spaCy window encoder (``MaxoutWindowEncoder``, window 1) with an int8 product:
    ``X + layernorm(maxout(window(X) @ (B * S) + c))``.  Inputs X (N x W, float32), B (3W x M, int8), S and c
    (M, float32: the scale per column and the bias), G and b (W, float32: the layer norm's), shape (3, int64:
    ``[0, -1, pieces]``); output Y (N x W).  ``window(X)`` puts each row beside its neighbours, zeros at the
    edges (thinc's ``seq2col``); the layer norm is ONNX's ``LayerNormalization`` with thinc's epsilon, 1e-8.  Opset 17 and com.microsoft 1, IR 8."""
    import numpy
    from onnx import TensorProto, checker, helper, numpy_helper

    const = [numpy_helper.from_array(numpy.array(v, dtype), name) for name, v, dtype in (
        ("pads", [1, 0, 1, 0], numpy.int64), ("axis0", [0], numpy.int64), ("zero", [0], numpy.int64),
        ("one", [1], numpy.int64), ("two", [2], numpy.int64), ("minus2", [-2], numpy.int64),
        ("minus1", [-1], numpy.int64), ("end", [2 ** 62], numpy.int64))]
    node = helper.make_node
    nodes = [
        node("Pad", ["X", "pads"], ["padded"]),
        node("Slice", ["padded", "zero", "minus2", "axis0"], ["before"]),
        node("Slice", ["padded", "one", "minus1", "axis0"], ["here"]),
        node("Slice", ["padded", "two", "end", "axis0"], ["after"]),
        node("Concat", ["before", "here", "after"], ["window"], axis=1),
        node("DynamicQuantizeMatMul", ["window", "B", "S", "", "c"], ["product"], domain="com.microsoft"),
        node("Reshape", ["product", "shape"], ["pieces"]),
        node("ReduceMax", ["pieces"], ["best"], axes=[2], keepdims=0),
        node("LayerNormalization", ["best", "G", "b"], ["shifted"], axis=-1, epsilon=1e-8),
        node("Add", ["X", "shifted"], ["Y"]),
    ]
    info = helper.make_tensor_value_info
    inputs = [info("X", TensorProto.FLOAT, ["N", "W"]), info("B", TensorProto.INT8, ["K", "M"]),
              info("S", TensorProto.FLOAT, ["M"]), info("c", TensorProto.FLOAT, ["M"]),
              info("G", TensorProto.FLOAT, ["W"]), info("b", TensorProto.FLOAT, ["W"]),
              info("shape", TensorProto.INT64, [3])]
    graph = helper.make_graph(nodes, "window_block_int8", inputs, [info("Y", TensorProto.FLOAT, ["N", "W"])],
                              initializer=const)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="cloud-edge-privacy")
    model.ir_version = 8
    checker.check_model(model)
    return model.SerializeToString()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DIR, help=f"where to write the graphs (default: {DIR})")
    args = ap.parse_args()
    for name, data in (("products.onnx", graph_bytes()), ("window_block_int8.onnx", window_block_graph_bytes())):
        (args.dir / name).write_bytes(data)
        print(f"wrote {args.dir / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()

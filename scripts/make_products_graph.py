"""Write the two one-node ONNX graphs through which :mod:`cloud_edge_privacy.detection.products` runs the spaCy
models' layer products in ONNX Runtime, in ``src/cloud_edge_privacy/detection/``:

* ``products.onnx``: ``Y = X @ W.T`` (``Gemm``, ``transB=1``, float32, any sizes);
* ``window_encoder_int8_d{1,2,3,4}.onnx``: a window encoder of that many residual blocks, each product in int8
  (``DynamicQuantizeMatMul``: ``X`` is quantized to uint8 as it comes; see :func:`window_encoder_graph_bytes`).

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


ENCODER_DEPTHS = (1, 2, 3, 4)  # one graph each: the models' encoders have 3 or 4 blocks; 1 runs any depth block by block


def window_encoder_graph_bytes(depth: int) -> bytes:
    """``depth`` residual blocks of a spaCy window encoder (``MaxoutWindowEncoder``, window 1), each with an int8
    product: ``X = X + layernorm(maxout(window(X) @ (B * S) + c))``.  Inputs X (N x W, float32), then for each
    block k: Bk (3W x M, int8), Sk and ck (M, float32: the scale per column and the bias), Gk and bk (W, float32:
    the layer norm's); shape (3, int64: ``[0, -1, pieces]``); output Y (N x W).  ``window(X)`` puts each row beside
    its neighbours, zeros at the edges (thinc's ``seq2col``); the layer norm is ONNX's ``LayerNormalization`` with
    thinc's epsilon, 1e-8.  Opset 17 and com.microsoft 1, IR 8."""
    import numpy
    from onnx import TensorProto, checker, helper, numpy_helper

    const = [numpy_helper.from_array(numpy.array(v, dtype), name) for name, v, dtype in (
        ("pads", [1, 0, 1, 0], numpy.int64), ("axis0", [0], numpy.int64), ("zero", [0], numpy.int64),
        ("one", [1], numpy.int64), ("two", [2], numpy.int64), ("minus2", [-2], numpy.int64),
        ("minus1", [-1], numpy.int64), ("end", [2 ** 62], numpy.int64))]
    node, info = helper.make_node, helper.make_tensor_value_info
    nodes, inputs, x = [], [info("X", TensorProto.FLOAT, ["N", "W"])], "X"
    for k in range(depth):
        n = lambda name: f"{name}{k}"  # noqa: E731
        inputs += [info(n("B"), TensorProto.INT8, ["K", "M"]), info(n("S"), TensorProto.FLOAT, ["M"]),
                   info(n("c"), TensorProto.FLOAT, ["M"]), info(n("G"), TensorProto.FLOAT, ["W"]),
                   info(n("b"), TensorProto.FLOAT, ["W"])]
        y = "Y" if k == depth - 1 else n("out")
        nodes += [
            node("Pad", [x, "pads"], [n("padded")]),
            node("Slice", [n("padded"), "zero", "minus2", "axis0"], [n("before")]),
            node("Slice", [n("padded"), "one", "minus1", "axis0"], [n("here")]),
            node("Slice", [n("padded"), "two", "end", "axis0"], [n("after")]),
            node("Concat", [n("before"), n("here"), n("after")], [n("window")], axis=1),
            node("DynamicQuantizeMatMul", [n("window"), n("B"), n("S"), "", n("c")], [n("product")],
                 domain="com.microsoft"),
            node("Reshape", [n("product"), "shape"], [n("pieces")]),
            node("ReduceMax", [n("pieces")], [n("best")], axes=[2], keepdims=0),
            node("LayerNormalization", [n("best"), n("G"), n("b")], [n("normed")], axis=-1, epsilon=1e-8),
            node("Add", [x, n("normed")], [y]),
        ]
        x = y
    inputs.append(info("shape", TensorProto.INT64, [3]))
    graph = helper.make_graph(nodes, f"window_encoder_int8_d{depth}", inputs,
                              [info("Y", TensorProto.FLOAT, ["N", "W"])], initializer=const)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="cloud-edge-privacy")
    model.ir_version = 8
    checker.check_model(model)
    return model.SerializeToString()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DIR, help=f"where to write the graphs (default: {DIR})")
    args = ap.parse_args()
    graphs = [("products.onnx", graph_bytes())]
    graphs += [(f"window_encoder_int8_d{d}.onnx", window_encoder_graph_bytes(d)) for d in ENCODER_DEPTHS]
    for name, data in graphs:
        (args.dir / name).write_bytes(data)
        print(f"wrote {args.dir / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()

"""Write the two one-node ONNX graphs through which :mod:`cloud_edge_privacy.detection.products` runs the spaCy
models' layer products in ONNX Runtime, in ``src/cloud_edge_privacy/detection/``:

* ``products.onnx``: ``Y = X @ W.T`` (``Gemm``, ``transB=1``, float32, any sizes);
* ``products_int8.onnx``: ``Y = X @ (B * S)`` with ``B`` int8 (K x N) and ``S`` its float32 scale per column
  (``DynamicQuantizeMatMul``: ``X`` is quantized to uint8 as it comes), for the window encoders' layers.

No weights: each graph takes its matrices as inputs.  Deterministic (the same bytes on every run).  Needs the
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


def int8_graph_bytes() -> bytes:
    """The serialized model: inputs X (M x K, float32), B (K x N, int8) and S (N, float32), output Y (M x N);
    opset 13 and com.microsoft 1, IR version 8."""
    from onnx import TensorProto, checker, helper

    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["M", "K"]),
              helper.make_tensor_value_info("B", TensorProto.INT8, ["K", "N"]),
              helper.make_tensor_value_info("S", TensorProto.FLOAT, ["N"])]
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["M", "N"])
    node = helper.make_node("DynamicQuantizeMatMul", ["X", "B", "S"], ["Y"], domain="com.microsoft")
    graph = helper.make_graph([node], "products_int8", inputs, [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="cloud-edge-privacy")
    model.ir_version = 8
    checker.check_model(model)
    return model.SerializeToString()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DIR, help=f"where to write the graphs (default: {DIR})")
    args = ap.parse_args()
    for name, data in (("products.onnx", graph_bytes()), ("products_int8.onnx", int8_graph_bytes())):
        (args.dir / name).write_bytes(data)
        print(f"wrote {args.dir / name} ({len(data)} bytes)")


if __name__ == "__main__":
    main()

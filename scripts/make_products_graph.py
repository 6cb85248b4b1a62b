"""Write ``src/cloud_edge_privacy/detection/products.onnx``: the one-node ONNX graph ``Y = X @ W.T`` (``Gemm``,
``transB=1``, float32, any sizes) through which :mod:`cloud_edge_privacy.detection.products` runs the spaCy
models' layer products in ONNX Runtime.  No weights: the graph takes both matrices as inputs.  Deterministic (the
same bytes on every run).  Needs the ``[encoder-train]`` extra (onnx).

    .venv/bin/python scripts/make_products_graph.py [--out PATH]
"""
from __future__ import annotations

import argparse
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "cloud_edge_privacy" / "detection" / "products.onnx"


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help=f"where to write the graph (default: {OUT})")
    args = ap.parse_args()
    data = graph_bytes()
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data)} bytes)")


if __name__ == "__main__":
    main()

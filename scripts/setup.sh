#!/usr/bin/env bash
# Create .venv and install freyr-dspy with its test tools. Idempotent; safe to re-run.
# llama-cpp-python compiles from source once (~11 min on 2 cores); pip caches the wheel.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --upgrade pip
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF}"
python -m pip install -q -e ".[test]"

#!/usr/bin/env bash
# The project's main job: compile the LLMaker program for the embedded default model
# (Qwen2.5-Coder-1.5B-Instruct, in-process, no download) on the project's own trainset, print the
# dev score before and after, and write compiled/llmaker.json. Budgeted for ≤ 20 minutes on 2 CPU
# cores: short gold demos (2, long fields cut), capped output lengths, 20 % of the rows as dev
# examples. The program keeps FREYR's 3 retries: an artifact compiled without them ran every test
# step with a single attempt while the uncompiled program it was compared with had four. Demos go
# on the intent role only (on SmolLM2, parameters demos were copied into other tools' arguments;
# see docs/results/compile.md). Run scripts/setup.sh first (the README's first command
# does both). Extra arguments go to `freyr compile` and win (e.g. --optimizer bootstrap, --model ID).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export LITELLM_LOCAL_MODEL_COST_MAP=true
exec freyr compile --benchmark llmaker --optimizer labeled --max-demos 2 --demo-maxlen 200 \
    --demo-roles intent \
    --dev-fraction 0.2 \
    --sampling intent.max_tokens=32 --sampling parameters.max_tokens=128 \
    --sampling summary.max_tokens=64 --sampling chat.max_tokens=64 \
    --out compiled/llmaker.json "$@"

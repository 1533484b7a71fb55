#!/usr/bin/env bash
# The project's main job: compile a program for the embedded default model
# (Qwen2.5-Coder-1.5B-Instruct, in-process, no download) on our own tool-call suite
# (trainsets/calls/), then print the held-out *test* score of the model's preset uncompiled
# (what a user gets for free) and of what the compile shipped, and write compiled/calls.json.
#
# The compile is the study of `freyr compile`: the preset first, then demos and switches,
# each scored on every training row by cross-validation; a change ships only when it beats
# the preset by a margin the rows support. Budgeted for about 10 minutes on 2 CPU cores (the
# 1.5B scores ~6 rows a minute): 21 rows spread over the suite's toolboxes and categories
# (--limit, --test-limit), two trials (the preset, then the preset with nearest demos).
# Measured on a fresh study over the 262-row suite: 10.7 minutes; it kept the preset (0.714 vs
# 0.571 cross-validated) and printed 0.619 -> 0.619 on the 21 test rows
# (docs/results/compile-study.md).
# `freyr compile --tools trainsets/calls/tools.json --examples trainsets/calls/train.jsonl
# --test trainsets/calls/test.jsonl` runs the whole suite (docs/compile.md).
#
# `bash scripts/main_job.sh --llmaker` compiles the LLMaker program instead (the main job of
# earlier versions: labelled intent demos, dev score before and after, compiled/llmaker.json).
# Other extra arguments go to `freyr compile` and win (e.g. --model ID, --trials N).
# Run scripts/setup.sh first (the README's first command does both).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export LITELLM_LOCAL_MODEL_COST_MAP=true
if [[ "${1:-}" == "--llmaker" ]]; then
    shift
    # The program keeps FREYR's 3 retries, and demos go on the intent role only (on SmolLM2,
    # parameters demos were copied into other tools' arguments; see docs/results/compile.md).
    exec freyr compile --no-search --benchmark llmaker --optimizer labeled --max-demos 2 \
        --demo-maxlen 200 --demo-roles intent --dev-fraction 0.2 \
        --sampling intent.max_tokens=32 --sampling parameters.max_tokens=128 \
        --sampling summary.max_tokens=64 --sampling chat.max_tokens=64 \
        --out compiled/llmaker.json "$@"
fi
exec freyr compile --tools trainsets/calls/tools.json \
    --examples trainsets/calls/train.jsonl --test trainsets/calls/test.jsonl \
    --limit 21 --test-limit 21 --trials 2 --max-demos 3 --timeout 5 \
    --sampling temperature=0 --sampling seed=0 \
    --out compiled/calls.json "$@"

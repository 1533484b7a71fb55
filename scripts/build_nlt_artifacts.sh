#!/usr/bin/env bash
# Rebuild the four shipped NLT artifacts (nlt-alex, nlt-sage; Qwen 1.5B and 0.5B), ~8 min.
# Their demos hold the benchmark's tool names by catalog position (freyr compile writes them so).
# Labelled demos from our trainsets, no LM call to choose them, so every build gives the same
# demos (the dev scoring runs the model).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export LITELLM_LOCAL_MODEL_COST_MAP=true
for scenario in alex sage; do
    for suffix in "" "-qwen0.5b"; do
        model=embedded/qwen2.5-coder-1.5b
        [[ -n "$suffix" ]] && model=embedded/qwen2.5-coder-0.5b
        freyr compile --no-search --benchmark "nlt-$scenario" --strategy nlt --optimizer labeled \
            --max-demos 3 --demo-maxlen 200 --demo-omit tools --model "$model" \
            --out "compiled/nlt-$scenario$suffix.json" "$@"
    done
done

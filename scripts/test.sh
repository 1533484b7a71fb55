#!/usr/bin/env bash
# The project's test command (README and .ci/run both call it): the default, non-slow suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
export LITELLM_LOCAL_MODEL_COST_MAP=true
python -m pytest -m "not live and not slow" -q "$@"

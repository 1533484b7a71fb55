"""Which search parameters mattered: PED-ANOVA importances and the per-objective targets.

Kept apart from ``search.report`` so that reading a study back (``search.result``) and writing
its report both use it without importing each other.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from freyr_dspy.search._objective import OBJECTIVES

if TYPE_CHECKING:
    from optuna import Study

__all__ = ["objective_target", "param_importances"]

logger = logging.getLogger(__name__)


def param_importances(study: Study, objectives: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """PED-ANOVA importance of each parameter, per objective (empty when not computable)."""
    from optuna.importance import get_param_importances
    from optuna.trial import TrialState

    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    result: dict[str, dict[str, float]] = {}
    for index, name in enumerate(objectives):
        if len({t.values[index] for t in complete}) < 2:
            continue  # a constant objective: every parameter would look equally important
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # optuna warns on tiny or constant studies
                values = get_param_importances(study, target=objective_target(index, name))
        except (RuntimeError, ValueError, ZeroDivisionError) as exc:
            logger.info("no parameter importances for %s: %s", name, exc)
            continue
        if values:  # empty when no parameter varies
            result[name] = {param: round(float(v), 4) for param, v in values.items()}
    return result


def objective_target(
    index: int, name: str, *, for_importance: bool = True
) -> Callable[[Any], float]:
    """The value of objective ``name`` (the ``index``-th) of a trial, as Optuna's target."""
    # NOTE: PED-ANOVA rates parameters for reaching *low* values; negate maximised objectives.
    sign = -1.0 if for_importance and OBJECTIVES[name] == "maximize" else 1.0
    return lambda trial: sign * float(trial.values[index])

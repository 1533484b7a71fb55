"""What a search returns: every trial as plain JSON-ready values, the Pareto front, importances.

Nothing here holds a program or an LM: a trial is rebuilt from its stored configuration
(``TrialSummary.trial_config()``), which is what ``--compile-best`` does with the winner.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freyr_dspy.search._space import TrialConfig

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import FrozenTrial

__all__ = ["SearchResult", "TrialSummary", "collect_result"]


@dataclass(frozen=True)
class TrialSummary:
    """One trial: its state, objective values, configuration and, when failed, why."""

    number: int
    state: str
    values: dict[str, float]
    config: dict[str, Any] | None
    evaluation: dict[str, Any] | None = None
    failure: str | None = None
    cached: bool = False
    baseline: bool = False
    worker: str | None = None

    @classmethod
    def from_trial(cls, trial: FrozenTrial, objectives: tuple[str, ...]) -> TrialSummary:
        """Summarise an Optuna ``FrozenTrial``."""
        attrs = trial.user_attrs
        values = dict(zip(objectives, trial.values, strict=True)) if trial.values else {}
        return cls(
            number=trial.number,
            state=trial.state.name,
            values=values,
            config=attrs.get("config"),
            evaluation=attrs.get("evaluation"),
            failure=attrs.get("failure"),
            cached=bool(attrs.get("cached")),
            baseline=bool(attrs.get("baseline")),
            worker=attrs.get("worker"),
        )

    def trial_config(self) -> TrialConfig | None:
        """The configuration this trial evaluated, ready to rebuild its program."""
        return TrialConfig.model_validate(self.config) if self.config else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class SearchResult:
    """The outcome of ``search_assignments``."""

    study_name: str
    storage: str
    objectives: tuple[str, ...]
    trials: tuple[TrialSummary, ...]
    pareto: tuple[TrialSummary, ...]
    importances: dict[str, dict[str, float]] = field(default_factory=dict)
    out_dir: Path | None = None
    cache_hits: int = 0
    files: dict[str, Path] = field(default_factory=dict)

    @property
    def best(self) -> TrialSummary | None:
        """The Pareto trial to ship: the first objective first, then the others in order."""
        if not self.pareto:
            return None
        return min(self.pareto, key=self.sort_key)

    @property
    def baseline(self) -> TrialSummary | None:
        """The default configuration's trial, when it finished."""
        return next((t for t in self.trials if t.baseline and t.state == "COMPLETE"), None)

    def sort_key(self, trial: TrialSummary) -> tuple[float, ...]:
        """Order trials best first by the objectives, in order (accuracy is maximised)."""
        from freyr_dspy.search._objective import OBJECTIVES

        return tuple(
            -trial.values[o] if OBJECTIVES[o] == "maximize" else trial.values[o]
            for o in self.objectives
        )

    def counts(self) -> dict[str, int]:
        """How many trials ended in each state."""
        counts: dict[str, int] = {}
        for trial in self.trials:
            counts[trial.state] = counts.get(trial.state, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (``best`` and ``baseline`` are trial numbers)."""
        best, base = self.best, self.baseline
        return {
            "study": self.study_name,
            "storage": self.storage,
            "objectives": list(self.objectives),
            "counts": self.counts(),
            "cache_hits": self.cache_hits,
            "best": best.number if best else None,
            "baseline": base.number if base else None,
            "pareto": [t.to_json() for t in sorted(self.pareto, key=self.sort_key)],
            "importances": self.importances,
            "files": {k: str(v) for k, v in self.files.items()},
            "trials": [t.to_json() for t in self.trials],
        }


def collect_result(
    study: Study,
    objectives: tuple[str, ...],
    *,
    storage: str,
    out_dir: Path | None,
    cache_hits: int = 0,
) -> SearchResult:
    """Read a study back into a ``SearchResult`` (with parameter importances)."""
    from freyr_dspy.search._importance import param_importances

    trials = tuple(TrialSummary.from_trial(t, objectives) for t in study.get_trials(deepcopy=False))
    complete = [t for t in trials if t.state == "COMPLETE"]
    pareto_numbers = {t.number for t in study.best_trials} if complete else set()
    return SearchResult(
        study_name=study.study_name,
        storage=storage,
        objectives=objectives,
        trials=trials,
        pareto=_distinct(t for t in trials if t.number in pareto_numbers),
        importances=param_importances(study, objectives) if complete else {},
        out_dir=out_dir,
        cache_hits=cache_hits,
    )


def _distinct(trials: Iterable[TrialSummary]) -> tuple[TrialSummary, ...]:
    """Keep the first trial of each configuration (repeats are cache hits of the same one)."""
    seen: set[str] = set()
    kept = []
    for trial in trials:
        key = json.dumps(trial.config, sort_keys=True)
        if key not in seen:
            seen.add(key)
            kept.append(trial)
    return tuple(kept)

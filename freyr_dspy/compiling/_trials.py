"""The compile's trials in an Optuna study: one trial per candidate scored, resumable.

A compile chooses its candidates from the baseline's log, not by sampling, so the study is
its ledger: each candidate is a trial (``ask``), its rows' outcomes are written to the trial
as they come (a user attribute), and it ends ``COMPLETE`` when every row is scored or
``PRUNED`` when successive halving stopped it. A rerun of the same compile finds each
candidate's finished trial and reuses it; a trial a killed process left running is failed,
and the candidate scored again - from the rows' file cache, so only unscored rows cost. The
study lives in a journal file by default, or in an RDB (``--storage postgresql://...``).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from freyr_dspy.compiling._candidates import Candidate
from freyr_dspy.errors import ConfigError
from freyr_dspy.studies import fail_dead_local_trials, open_storage, redact, worker_id

if TYPE_CHECKING:
    from optuna import Study
    from optuna.trial import Trial

__all__ = ["Trial", "TrialBook"]

logger = logging.getLogger(__name__)


@dataclass
class Scoring:
    """A candidate being scored or scored: its trial and its rows so far."""

    number: int
    stage: str
    candidate: Candidate
    reason: str
    rows: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, float] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    state: str = "RUNNING"
    trial: Any = None

    @property
    def accuracy(self) -> float:
        """Mean success over the rows scored so far."""
        return sum(self.rows.values()) / max(len(self.rows), 1)

    @property
    def mean_tokens(self) -> float:
        """Tokens per row."""
        return sum(self.tokens.values()) / max(len(self.tokens), 1)

    @property
    def mean_seconds(self) -> float:
        """Seconds per row (what the rows would cost, replayed calls included)."""
        return sum(self.seconds.values()) / max(len(self.seconds), 1)


class TrialBook:
    """The study a compile records its candidates in (see the module docstring).

    Raises:
        ConfigError: the storage is unusable, or the study was made for other rows.
    """

    def __init__(self, storage: str, name: str, description: Mapping[str, Any]) -> None:
        import optuna

        self.name = name
        self.storage = redact(storage)
        backend = open_storage(storage)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            self.study: Study = optuna.create_study(
                storage=backend, study_name=name, direction="maximize", load_if_exists=True
            )
        fail_dead_local_trials(backend, name)
        stored = self.study.user_attrs.get("freyr_compile")
        if stored is None:
            self.study.set_user_attr("freyr_compile", dict(description))
        elif stored != description:
            raise ConfigError(
                f"compile study {name!r} in {self.storage} was made for other rows or options; "
                "pass a new --study name"
            )

    def finished(self, candidate: Candidate) -> Scoring | None:
        """The candidate's finished trial in this study (a rerun reuses it), if any."""
        for trial in self.study.get_trials(deepcopy=False):
            if trial.state.name not in ("COMPLETE", "PRUNED"):
                continue
            if trial.user_attrs.get("config") == candidate.model_dump(mode="json"):
                return Scoring(
                    number=trial.number,
                    stage=str(trial.user_attrs.get("stage")),
                    candidate=candidate,
                    reason=str(trial.user_attrs.get("reason") or ""),
                    rows=dict(trial.user_attrs.get("rows") or {}),
                    tokens=dict(trial.user_attrs.get("row_tokens") or {}),
                    seconds=dict(trial.user_attrs.get("row_seconds") or {}),
                    state=trial.state.name,
                )
        return None

    def start(self, candidate: Candidate, stage: str, reason: str) -> Scoring:
        """A new trial for ``candidate``."""
        trial = self.study.ask()
        trial.set_user_attr("config", candidate.model_dump(mode="json"))
        trial.set_user_attr("stage", stage)
        trial.set_user_attr("reason", reason)
        trial.set_user_attr("worker", worker_id())
        return Scoring(trial.number, stage, candidate, reason, trial=trial)

    def save_rows(self, scoring: Scoring) -> None:
        """Write the rows scored so far to the trial (an interrupted trial keeps them)."""
        if scoring.trial is None:
            return
        scoring.trial.set_user_attr("rows", scoring.rows)
        scoring.trial.set_user_attr("row_tokens", scoring.tokens)
        scoring.trial.set_user_attr("row_seconds", scoring.seconds)

    def finish(self, scoring: Scoring, *, pruned: bool = False) -> None:
        """End the trial: complete with its score, or pruned."""
        from optuna.trial import TrialState

        if scoring.trial is None:
            return
        self.save_rows(scoring)
        if pruned:
            self.study.tell(scoring.trial, state=TrialState.PRUNED)
            scoring.state = "PRUNED"
        else:
            self.study.tell(scoring.trial, scoring.accuracy)
            scoring.state = "COMPLETE"
        scoring.trial = None

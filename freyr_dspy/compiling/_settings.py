"""``CompileSettings``: everything a compile study may be told, in one value.

``freyr compile`` builds one from its options and ``freyr_dspy.compile(program, examples,
settings=...)`` takes one, so the two run the same study. The defaults are the ones the
compile was measured with (docs/results/compile-study.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from freyr_dspy.compiling._guard import ALPHA, DEFAULT_FOLDS
from freyr_dspy.compiling._proposals import STAGES
from freyr_dspy.errors import ConfigError
from freyr_dspy.schemas import RoleModel

__all__ = ["DEFAULT_MINUTES", "CompileSettings"]

#: The default budget, in minutes: ~100 rows of the 0.5B on 2 cores.
DEFAULT_MINUTES = 20.0


@dataclass(frozen=True)
class CompileSettings:
    """How a compile study runs.

    Args:
        minutes: no candidate starts when it would end after this (None: no limit); the
            baseline pass runs whatever it is, held-out rows are scored after it.
        stages: the stages to run, in order (``margins``, ``switches``, ``demos``,
            ``models``).
        switches: the switches a compile may flip (None: every switch of the strategy).
        max_demos: demos a request is shown from a pool (0: no demo stage).
        demo_roles: the roles a pool may go on (None: the planning roles and parameters).
        candidates: role -> other models the ``models`` stage may try.
        folds: folds of the guard's nested selection.
        alpha: the guard's significance (one-sided sign test).
        seed: seeds the folds (and the rows' scoring order).
        limit: use this many training rows, spread evenly over them (all when None).
        demo_maxlen: cut demo input fields longer than this many characters.
        keep_tool_text: keep the tools' catalog and specs in the demos.
        demo_omit: input fields left out of every demo.
        study_dir: the folder of the study, its rows' cache and records.
        storage: the study's storage (default: a journal file in ``study_dir``).
        study_name: the study's name (default: from what it fits, so a rerun resumes).
    """

    minutes: float | None = DEFAULT_MINUTES
    stages: tuple[str, ...] = STAGES
    switches: tuple[str, ...] | None = None
    max_demos: int = 3
    demo_roles: tuple[str, ...] | None = None
    candidates: Mapping[str, Sequence[RoleModel]] = field(default_factory=dict)
    folds: int = DEFAULT_FOLDS
    alpha: float = ALPHA
    seed: int = 0
    limit: int | None = None
    demo_maxlen: int | None = None
    keep_tool_text: bool = False
    demo_omit: tuple[str, ...] = ()
    study_dir: Path | None = None
    storage: str | None = None
    study_name: str | None = None

    def __post_init__(self) -> None:
        unknown = [s for s in self.stages if s not in STAGES]
        if unknown:
            raise ConfigError(
                f"unknown compile stage(s) {', '.join(unknown)}; expected any of "
                f"{', '.join(STAGES)}"
            )
        if self.minutes is not None and self.minutes <= 0:
            raise ConfigError(f"the compile budget is a number of minutes > 0, got {self.minutes}")
        if self.max_demos < 0:
            raise ConfigError(f"max_demos is at least 0, got {self.max_demos}")

    def describe(self) -> dict[str, object]:
        """What decides the study's trials (stored with the study, hashed into its name)."""
        return {
            "stages": list(self.stages),
            "switches": None if self.switches is None else list(self.switches),
            "max_demos": self.max_demos,
            "demo_roles": None if self.demo_roles is None else list(self.demo_roles),
            "candidates": {
                role: [m.model_dump(mode="json") for m in models]
                for role, models in sorted(self.candidates.items())
            },
            "folds": self.folds,
            "seed": self.seed,
            "demo_maxlen": self.demo_maxlen,
            "keep_tool_text": self.keep_tool_text,
            "demo_omit": list(self.demo_omit),
        }

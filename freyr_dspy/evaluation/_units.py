"""The unit of an evaluation: one episode of one benchmark, strategy and run.

Units are what the harness schedules, checkpoints and resumes: a unit is either finished
(its records are on disk) or redone from scratch, never half-kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from freyr_dspy.evaluation._runner import StepRecord

__all__ = ["UnitKey", "UnitResult"]


@dataclass(frozen=True, order=True)
class UnitKey:
    """Which (benchmark, strategy, run, episode) a unit is; its identity in checkpoints."""

    benchmark: str
    strategy: str
    run: int
    episode: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "benchmark": self.benchmark,
            "strategy": self.strategy,
            "run": self.run,
            "episode": self.episode,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitKey:
        """Rebuild a key from ``to_json`` output."""
        return cls(
            str(data["benchmark"]), str(data["strategy"]), int(data["run"]), str(data["episode"])
        )


@dataclass(frozen=True)
class UnitResult:
    """The records of one finished unit.

    ``n_steps`` is the episode's planned number of steps: an episode that stops at its first
    failure records fewer, and the steps never reached count as failed in Steps %.
    ``step_ids`` names the planned steps, so reports can name the unreached ones too.
    """

    key: UnitKey
    case: str
    n_steps: int
    records: tuple[StepRecord, ...]
    step_ids: tuple[str, ...] = ()

    def step_id(self, index: int) -> str:
        """The id of planned step ``index`` (``#n`` when unknown)."""
        return self.step_ids[index] if index < len(self.step_ids) else f"#{index + 1}"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (one checkpoint line)."""
        return {
            "unit": self.key.to_json(),
            "case": self.case,
            "n_steps": self.n_steps,
            "step_ids": list(self.step_ids),
            "records": [r.to_json() for r in self.records],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UnitResult:
        """Rebuild a unit result from ``to_json`` output."""
        return cls(
            key=UnitKey.from_json(data["unit"]),
            case=str(data["case"]),
            n_steps=int(data["n_steps"]),
            records=tuple(StepRecord.from_json(r) for r in data["records"]),
            step_ids=tuple(str(i) for i in data.get("step_ids", ())),
        )

"""How scoring brings the context to a prompt from saved states (no model: a recording fake)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from freyr_dspy.backends._llamacpp_scoring import _evaluate_prefix


@dataclass
class State:
    input_ids: np.ndarray
    n_tokens: int


@dataclass
class FakeLlama:
    """The few ``Llama`` members ``_evaluate_prefix`` uses; ``eval`` records what it is given."""

    n_ctx: int = 16
    n_tokens: int = 0
    input_ids: np.ndarray = field(default_factory=lambda: np.zeros(16, dtype=np.intc))
    cache: dict[tuple[int, ...], State] = field(default_factory=dict)
    evaluated: list[list[int]] = field(default_factory=list)

    @property
    def _input_ids(self) -> np.ndarray:
        return self.input_ids[: self.n_tokens]

    @staticmethod
    def longest_token_prefix(a: Any, b: Any) -> int:
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return n

    def eval(self, tokens: list[int]) -> None:
        # llama.cpp refuses a batch that does not continue the positions its cache holds
        assert self.n_tokens <= self.held, "llama_decode returned -1"
        self.evaluated.append(list(tokens))
        self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
        self.n_tokens += len(tokens)
        self.held = self.n_tokens

    held: int = 0

    def save_state(self) -> State:
        return State(self.input_ids.copy(), self.n_tokens)

    def load_state(self, state: State) -> None:
        self.input_ids, self.n_tokens = state.input_ids.copy(), state.n_tokens
        self.held = state.n_tokens


class LongestPrefixCache(dict[tuple[int, ...], State]):
    """Like llama-cpp-python's RAM cache: keys are token tuples, looked up by longest prefix."""

    def __setitem__(self, key: Any, state: State) -> None:
        super().__setitem__(tuple(key), state)

    def __getitem__(self, key: Any) -> State:
        best = max(self, key=lambda k: FakeLlama.longest_token_prefix(k, key), default=None)
        if best is None:
            raise KeyError(key)
        return super().__getitem__(best)


def test_a_saved_states_stale_tokens_are_not_counted_as_restored() -> None:
    llama = FakeLlama(cache=LongestPrefixCache())
    # a state holding 3 tokens, whose buffer still has 4 more from an earlier prompt
    buffer = np.array([1, 2, 3, 4, 5, 6, 7] + [0] * 9, dtype=np.intc)
    llama.cache[(1, 2, 3)] = State(buffer, 3)
    assert _evaluate_prefix(llama, [1, 2, 3, 4, 5, 6, 7, 8]) == 5
    assert llama.evaluated == [[4, 5, 6, 7, 8]]


def test_the_prompt_is_saved_for_the_next_one_that_starts_the_same_way() -> None:
    llama = FakeLlama(cache=LongestPrefixCache())
    _evaluate_prefix(llama, [1, 2, 3, 4, 5])
    llama.n_tokens = llama.held = 0  # the context moves on to another prompt
    assert _evaluate_prefix(llama, [1, 2, 3, 4, 9]) == 1  # only the token that differs

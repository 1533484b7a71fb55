"""Log-likelihoods of a few short continuations of a chat prompt, on an in-process llama.cpp model.

A choice among names (which tool comes first in a plan) can be read from how likely the model
finds each name after the prompt, instead of from the one name greedy decoding writes
(``freyr_dspy.strategies._calibration`` corrects those likelihoods for the model's bias).

The prompt is rendered with the GGUF's own chat template, as ``create_chat_completion`` renders
it. The continuations' shared tokens are evaluated once - from the context already in the model,
or from the prefix cache, when they start the same way - then each continuation token by token:
one forward pass per token after the point where the continuations part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ContinuationScores", "chat_prompt", "score_continuations"]


@dataclass(frozen=True)
class ContinuationScores:
    """What scoring continuations found and cost."""

    #: log P(continuation | prompt), one per continuation, in their order.
    logprobs: tuple[float, ...]
    #: Tokens of the prompt and the continuations' shared start (what a call would send).
    prompt_tokens: int
    #: Tokens really evaluated; the rest were reused from the context or the prefix cache.
    evaluated: int


def chat_prompt(llama: Any, messages: list[dict[str, Any]]) -> str | None:
    """``messages`` rendered by the file's chat template, up to the answer; None without one."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=_token_text(llama, llama.token_eos()),
        bos_token=_token_text(llama, llama.token_bos()),
        add_generation_prompt=True,
    )
    return str(formatter(messages=messages).prompt)


def score_continuations(
    llama: Any, prompt: str, continuations: Sequence[str]
) -> ContinuationScores:
    """Score each of ``continuations`` (at least one, none empty) as the text after ``prompt``.

    Tokenised together with the prompt, so a token that spans the joint (``["`` + name) is the
    token the model would write.
    """
    sequences = [_tokens(llama, prompt + text) for text in continuations]
    # Each continuation keeps at least one token of its own to score.
    shared = min(_shared_length(sequences), min(len(s) for s in sequences) - 1)
    evaluated = _evaluate_prefix(llama, sequences[0][:shared])
    first = _next_logprobs(llama)
    logprobs = []
    for sequence in sequences:
        logprob = float(first[sequence[shared]])
        for previous, token in zip(sequence[shared:], sequence[shared + 1 :], strict=False):
            llama.eval([previous])
            evaluated += 1
            logprob += float(_next_logprobs(llama)[token])
        llama.n_tokens = shared  # the next continuation starts from the shared prefix again
        logprobs.append(logprob)
    # NOTE: the logits in the context are now the last continuation's. llama-cpp-python samples
    # straight from the current logits when a prompt is wholly in context, so the context is
    # left one token short: the next completion evaluates that token again.
    llama.n_tokens = max(shared - 1, 0)
    return ContinuationScores(tuple(logprobs), prompt_tokens=shared, evaluated=evaluated)


def _evaluate_prefix(llama: Any, prefix: list[int]) -> int:
    """Bring the model's context to ``prefix``, reusing what it can; return tokens evaluated."""
    reused = llama.longest_token_prefix(llama._input_ids.tolist(), prefix)
    if llama.cache is not None:
        try:
            saved = llama.cache[prefix]
        except KeyError:
            saved = None
        if saved is not None:
            # NOTE: a state's input_ids is the whole context buffer; only its first n_tokens
            # are in its KV cache. Counting the stale tokens after them restored positions the
            # state does not hold, and llama_decode refused the next batch (returned -1).
            held = saved.input_ids[: saved.n_tokens].tolist()
            restored = llama.longest_token_prefix(held, prefix)
            if restored > reused:
                llama.load_state(saved)
                reused = restored
    # NOTE: at least the last token is evaluated: its logits are the first choice's, and a
    # saved state keeps no logits.
    llama.n_tokens = min(reused, len(prefix) - 1)
    todo = prefix[llama.n_tokens :]
    llama.eval(todo)
    if llama.cache is not None and len(todo) > 1:
        # NOTE: saved as a completion's prompt is, so that the next prompt starting the same way
        # (a role's instructions, asked about another request) is not evaluated again: a role
        # that is only ever scored (confirm, with scored verdicts) had nothing saved otherwise.
        llama.cache[prefix] = llama.save_state()
    return len(todo)


def _next_logprobs(llama: Any) -> np.ndarray:
    """Log-probabilities of the next token after the last one evaluated."""
    from llama_cpp import llama_cpp

    logits = np.ctypeslib.as_array(
        llama_cpp.llama_get_logits_ith(llama.ctx, -1), shape=(llama.n_vocab(),)
    ).astype(np.float64)
    logits -= logits.max()
    return logits - np.log(np.exp(logits).sum())


def _shared_length(sequences: list[list[int]]) -> int:
    shared = 0
    while all(len(s) > shared for s in sequences) and len({s[shared] for s in sequences}) == 1:
        shared += 1
    return shared


def _tokens(llama: Any, text: str) -> list[int]:
    return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def _token_text(llama: Any, token: int) -> str:
    return "" if token < 0 else llama.detokenize([token], special=True).decode("utf-8", "replace")

"""A DSPy custom engine that runs a GGUF model in-process with llama-cpp-python.

DSPy 3.4 keeps its cache, history, callbacks and usage tracking around an engine object
(``complete(Request) -> Response``); this is the only module that knows that contract for
llama.cpp. One engine per GGUF file is shared by every role's LM (``lm.copy()`` shares it
too), and a lock serialises calls because a ``Llama`` object is not thread-safe.

Role calls of one request share long prefixes (instructions, demos, catalog, state), so the
engine keeps a prefix cache: llama.cpp's KV state is saved after each call and the saved state
with the longest common prefix is restored before the next, so only the new suffix is evaluated.
The prompt tokens that were reused are reported as cached tokens in the usage.

Under a JSON-schema grammar the grammar is checked on the sampler chain's pick first and the
whole vocabulary masked only when it refuses that token (``llamacpp_sampler``): the same greedy
text in about 0.7x the generation time.

While a text listener is installed (``freyr_dspy.text_stream``), a call without tools is
generated as a stream and each piece of its text goes to the listener as it is decoded
(``llamacpp_stream``); the response is the same either way.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from dspy.lm15 import Request, Response, response_to_events

from freyr_dspy.backends._llamacpp_messages import (
    completion_kwargs,
    to_openai_messages,
    to_response,
)
from freyr_dspy.backends._llamacpp_sampler import GrammarLastSampler
from freyr_dspy.backends._llamacpp_scoring import (
    ContinuationScores,
    chat_prompt,
    score_continuations,
)
from freyr_dspy.backends._llamacpp_stream import streamed_chat_completion
from freyr_dspy.backends._llamacpp_tools import (
    TEMPLATE_TOOLS,
    choose_with_handler,
    choose_with_template,
)
from freyr_dspy.backends._replay import ReplayMemo
from freyr_dspy.errors import ToolUnsupportedError
from freyr_dspy.text_stream import text_listener

__all__ = [
    "AUTO_TOOLS",
    "DEFAULT_PREFIX_CACHE_BYTES",
    "MAX_N_CTX",
    "LlamaCppEngine",
    "tool_format_of",
]

logger = logging.getLogger(__name__)

#: Context window of the embedded models: DSPy prompts with demos need far more than 512.
DEFAULT_N_CTX = 8192
#: Scorings the engine remembers (each a prompt's text and a few floats).
_SCORES_KEPT = 64
#: Cap for ``n_ctx=None`` (take the file's training context): 32k+ contexts cost GBs of KV cache.
MAX_N_CTX = 8192
#: RAM given to saved prefix states (a 2k-token state of a 1.5B model is ~60 MB).
DEFAULT_PREFIX_CACHE_BYTES = 1 << 30
#: ``tool_chat_format`` that picks the format from the file's chat template.
AUTO_TOOLS = "auto"


class LlamaCppEngine:
    """Serve ``dspy.LM`` requests from a local GGUF file through llama-cpp-python.

    Args:
        model_path: the GGUF file.
        n_ctx: context window in tokens; None takes the file's training context, capped at
            ``MAX_N_CTX``.
        n_threads: CPU threads; None uses every core (llama-cpp-python's own default is half
            of them, which makes generation ~1.6x slower on a 2-core machine).
        seed: default sampling seed, so runs are reproducible.
        chat_format: llama.cpp chat format; None uses the GGUF's own template.
        tool_chat_format: how the model chooses among several tools itself: ``"template"``
            (its own chat template renders the tools and it answers ``<tool_call>`` blocks),
            a llama.cpp handler name such as ``chatml-function-calling``, ``"auto"`` (decide
            from the template), or None: it cannot (a ``ToolUnsupportedError`` says so).
        prefix_cache_bytes: RAM for saved prefix states; 0 turns the prefix cache off.
        prompt_lookup: draft tokens per step for speculative decoding by prompt lookup
            (llama-cpp-python's ``LlamaPromptLookupDecoding``: the draft is copied from the
            prompt); 0 turns it off. Set before the model loads. Off by default: measured slower
            (docs/results/default-program.md, "Where the seconds go").
        grammar_last: under a grammar, check it on the chain's pick first (the default, see
            ``llamacpp_sampler``); False applies it to the whole vocabulary every token, as
            llama-cpp-python does (kept to measure the difference).
        compact_json: under a JSON schema, write the answer on one line unless the prompt
            shows indented answers (see ``llamacpp_messages.completion_kwargs``): about a
            fifth fewer output tokens for FREYR, but measured less accurate on our suite (4
            requests of 84 lost, none won, on the 1.5B), so off by default.
    """

    supports_function_calling = True
    supports_response_schema = True
    supported_params = (
        "temperature",
        "top_p",
        "top_k",
        "max_tokens",
        "stop",
        "seed",
        "response_format",
        "tools",
        "tool_choice",
    )

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int | None = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = 0,
        chat_format: str | None = None,
        tool_chat_format: str | None = None,
        prefix_cache_bytes: int = DEFAULT_PREFIX_CACHE_BYTES,
        prompt_lookup: int = 0,
        grammar_last: bool = True,
        compact_json: bool = False,
    ) -> None:
        self.model_path = str(model_path)
        self._grammar_last = grammar_last
        self.compact_json = compact_json
        self.prompt_lookup = prompt_lookup
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.chat_format = chat_format
        self.tool_chat_format = tool_chat_format
        self.prefix_cache_bytes = prefix_cache_bytes
        #: Prompt tokens sent and really evaluated over the engine's life (the rest were cached).
        self.prompt_tokens_sent = 0
        self.prompt_tokens_evaluated = 0
        self._llama: Any = None
        self._lock = threading.Lock()
        #: (prompt, continuations) -> scores: the calibrated tool choice scores the same
        #: content-free prompt for every request to one toolbox (``_remember_scores``).
        self._scores: OrderedDict[tuple[str, tuple[str, ...]], ContinuationScores] = OrderedDict()
        #: Calls already made, replayed for an identical request while a study runs
        #: (``freyr_dspy.backends._replay``); None: every call is made.
        self.replay: ReplayMemo | None = None

    @property
    def prompt_seconds(self) -> float:
        """Seconds spent evaluating prompts over the engine's life (0 before it loads).

        With the seconds of its calls, it splits the time into prompt evaluation and
        generation (``scripts/bench_speed.py``).
        """
        return float(self._llama.prompt_seconds) if self._llama is not None else 0.0

    @property
    def grammar_last(self) -> bool:
        """Whether a grammar is checked on the sampler's pick first (see the class)."""
        return self._grammar_last

    @grammar_last.setter
    def grammar_last(self, value: bool) -> None:
        with self._lock:
            self._grammar_last = value
            if self._llama is not None:
                self._llama.grammar_last = value

    def __deepcopy__(self, memo: dict[int, Any]) -> LlamaCppEngine:
        # One engine per GGUF: program.deepcopy() (optimizers) must share it, not copy it.
        return self

    def _model(self) -> Any:
        # NOTE: loaded lazily so that building a program (or listing models) costs nothing.
        if self._llama is None:
            self._llama = self._load()
        return self._llama

    def load(self) -> None:
        """Load the model now (it is otherwise loaded on the first call)."""
        with self._lock:
            self._model()

    def set_prefix_cache(self, capacity_bytes: int) -> None:
        """Resize the prefix cache; 0 turns it off (saved states are dropped either way)."""
        with self._lock:
            self.prefix_cache_bytes = capacity_bytes
            if self._llama is not None:
                self._llama.set_cache(_ram_cache(capacity_bytes))

    def forget_prompts(self) -> None:
        """Drop the saved prefix states and the context's tokens: the next call starts cold.

        Benchmarks call it between contestants, so that none finds another's prompts cached.
        """
        with self._lock:
            self._scores.clear()
            if self._llama is not None:
                self._llama.set_cache(_ram_cache(self.prefix_cache_bytes))
                self._llama.reset()

    def _load(self) -> Any:
        n_ctx = self.n_ctx or min(_training_context(self.model_path), MAX_N_CTX)
        logger.info("loading %s (n_ctx=%d)", self.model_path, n_ctx)
        llama = _counting_llama_class()(
            model_path=self.model_path,
            n_ctx=n_ctx,
            n_threads=self.n_threads or os.cpu_count(),
            seed=self.seed,
            chat_format=self.chat_format,
            draft_model=_draft_model(self.prompt_lookup),
            verbose=False,
        )
        llama.set_cache(_ram_cache(self.prefix_cache_bytes))
        llama.grammar_last = self._grammar_last
        if self.tool_chat_format == AUTO_TOOLS:
            self.tool_chat_format = tool_format_of(llama.metadata.get("tokenizer.chat_template"))
        return llama

    def complete(self, request: Request) -> Response:
        """Run one chat completion and convert it to a DSPy ``Response``.

        While a replay memo is attached, an identical request is answered from it.
        """
        if self.replay is not None:
            return self.replay.recall("complete", repr(request), lambda: self._complete(request))
        return self._complete(request)

    def _complete(self, request: Request) -> Response:
        kwargs = completion_kwargs(request, self.seed, compact=self.compact_json)
        messages = to_openai_messages(request)
        free_choice = bool(kwargs.get("tools")) and kwargs.get("tool_choice") in (
            "auto",
            "required",
        )
        if free_choice and self.tool_chat_format is None:
            raise _no_free_choice(request.model)  # before loading: nothing to load for
        # A tool call is parsed from the whole answer: only text is streamed.
        listener = None if kwargs.get("tools") else text_listener()
        with self._lock:
            llama = self._model()
            evaluated_before = llama.prompt_evaluated
            if free_choice:
                raw = self._choose_tools(llama, messages, kwargs, request.model)
            elif listener is not None:
                raw = streamed_chat_completion(llama, messages, kwargs, listener)
            else:
                raw = llama.create_chat_completion(messages=messages, **kwargs)
            evaluated = llama.prompt_evaluated - evaluated_before
        response = to_response(raw, request.model, evaluated=evaluated)
        self.prompt_tokens_sent += response.usage.input_tokens or 0
        self.prompt_tokens_evaluated += evaluated
        return response

    def _choose_tools(
        self, llama: Any, messages: list[dict[str, Any]], kwargs: dict[str, Any], model: str
    ) -> dict[str, Any]:
        """Let the model pick tools itself (see ``llamacpp_tools``).

        Raises:
            ToolUnsupportedError: when this model has no way to choose tools.
        """
        if self.tool_chat_format == TEMPLATE_TOOLS:
            return choose_with_template(llama, messages, kwargs)
        if self.tool_chat_format is None:
            raise _no_free_choice(model)
        return choose_with_handler(llama, self.tool_chat_format, messages, kwargs)

    def score_continuations(
        self, messages: list[dict[str, Any]], continuations: Sequence[str]
    ) -> ContinuationScores | None:
        """Log-likelihood of each continuation as the start of the answer to ``messages``.

        None when the engine does not render prompts with the file's own chat template (a
        ``chat_format`` was named): the scores would be of a prompt the model never sees.
        While a replay memo is attached, a scoring already made is answered from it.
        """
        if self.replay is not None:
            key = repr((messages, tuple(continuations)))
            return self.replay.recall("score", key, lambda: self._score(messages, continuations))
        return self._score(messages, continuations)

    def _score(
        self, messages: list[dict[str, Any]], continuations: Sequence[str]
    ) -> ContinuationScores | None:
        with self._lock:
            llama = self._model()
            prompt = chat_prompt(llama, messages) if self.chat_format is None else None
            if prompt is None:
                return None
            key = (prompt, tuple(continuations))
            if (known := self._scores.get(key)) is not None:
                self._scores.move_to_end(key)
                return replace(known, evaluated=0)  # scored before: nothing is evaluated
            scores = score_continuations(llama, prompt, continuations)
            self._remember_scores(key, scores)
            return scores

    def _remember_scores(
        self, key: tuple[str, tuple[str, ...]], scores: ContinuationScores
    ) -> None:
        """Keep the latest scorings (a model's scores of one prompt do not change).

        The calibrated tool choice scores each catalog name twice a request, once after the
        content-free message ``N/A``: that prompt is the same for every request to a toolbox
        (without conversation or state), so its scores are computed once.
        """
        self._scores[key] = scores
        while len(self._scores) > _SCORES_KEPT:
            self._scores.popitem(last=False)

    def stream(self, request: Request) -> Any:
        """Stream as a single delta (DSPy only needs the events' shape)."""
        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Release the model."""
        with self._lock:
            self._llama = None

    def count_tokens(self, text: str) -> int:
        """Count the tokens of ``text`` with this model's tokenizer."""
        with self._lock:
            return len(self._model().tokenize(text.encode(), add_bos=False))

    def dump_state(self) -> dict[str, Any]:
        """Record how to rebuild the engine (used when a program is saved with LMs attached)."""
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
            "tool_chat_format": self.tool_chat_format,
        }

    @classmethod
    def load_state(cls, state: dict[str, Any]) -> LlamaCppEngine:
        """Rebuild an engine from ``dump_state`` output."""
        return cls(
            state["model_path"],
            n_ctx=state.get("n_ctx", DEFAULT_N_CTX),
            seed=state.get("seed", 0),
            tool_chat_format=state.get("tool_chat_format"),
        )


def _no_free_choice(model: str) -> ToolUnsupportedError:
    return ToolUnsupportedError(
        "this embedded model cannot choose among tools natively (llama.cpp parses tool calls "
        "only when one tool is forced); use a strategy that selects the tool first, such as freyr",
        model=model,
    )


def _draft_model(tokens: int) -> Any:
    """A prompt-lookup draft model proposing ``tokens`` tokens per step, or None for 0."""
    if tokens <= 0:
        return None
    from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

    return LlamaPromptLookupDecoding(num_pred_tokens=tokens)


def _ram_cache(capacity_bytes: int) -> Any:
    """llama.cpp's RAM cache of saved states, looked up by longest token prefix; None if off."""
    if capacity_bytes <= 0:
        return None
    from llama_cpp.llama_cache import LlamaRAMCache

    return LlamaRAMCache(capacity_bytes=capacity_bytes)


def tool_format_of(chat_template: str | None) -> str | None:
    """Pick how a model chooses tools from its chat template (for ``gguf:`` files).

    Templates that render ``<tool_call>`` (Qwen2.5, Hermes) use them; other ChatML templates
    use llama.cpp's ``chatml-function-calling``; anything else cannot choose tools natively.
    """
    if not chat_template:
        return None
    if "<tool_call>" in chat_template:
        return TEMPLATE_TOOLS
    return "chatml-function-calling" if "<|im_start|>" in chat_template else None


def _training_context(model_path: str) -> int:
    """Read the training context length from the file's metadata (vocabulary-only load)."""
    from llama_cpp import Llama

    probe = Llama(model_path=model_path, vocab_only=True, verbose=False)
    try:
        return int(probe.n_ctx_train()) or DEFAULT_N_CTX
    finally:
        probe.close()


@functools.cache
def _counting_llama_class() -> type:
    """A ``Llama`` that counts the prompt tokens it evaluates and saves slim prefix states.

    NOTE: ``generate`` first evaluates what is left of the prompt after the prefix match, then
    samples; the first ``eval`` of each ``generate`` is therefore the prompt's uncached suffix.

    NOTE: ``Llama.save_state`` also copies its logits buffer (n_batch x n_vocab floats: 311 MB
    for Qwen's 152k vocabulary) into every saved state, uncounted by the RAM cache's capacity;
    a few calls then filled GBs and each save took a second. A restored state is always
    re-evaluated from its last token (``_requires_eval``), so those logits are never read: the
    states kept here hold only llama.cpp's own state (KV cache) and the token ids.
    """
    import ctypes

    import numpy as np
    from llama_cpp import Llama, LlamaState, llama_cpp

    class CountingLlama(Llama):  # type: ignore[misc]
        prompt_evaluated = 0
        #: Seconds spent evaluating prompts (the rest of a call is generation and overhead).
        prompt_seconds = 0.0
        #: The last generation's prompt and generated tokens (a streamed call reports no usage).
        last_prompt_tokens = 0
        last_generated = 0
        _in_prompt = False
        grammar_last = True

        def generate(self, tokens: Sequence[int], **kwargs: Any) -> Iterator[int]:
            self._in_prompt = True
            self.last_prompt_tokens, self.last_generated = len(tokens), 0
            for token in super().generate(tokens, **kwargs):
                # counted as llama-cpp-python counts completion tokens: end-of-generation is not
                if not llama_cpp.llama_vocab_is_eog(self._model.vocab, token):
                    self.last_generated += 1
                yield token

        def eval(self, tokens: Sequence[int]) -> None:
            if not self._in_prompt:
                super().eval(tokens)
                return
            self.prompt_evaluated += len(tokens)
            self._in_prompt = False
            started = time.perf_counter()
            super().eval(tokens)
            self.prompt_seconds += time.perf_counter() - started

        def sample(self, *args: Any, **kwargs: Any) -> Any:
            self._in_prompt = False  # a fully cached prompt samples without evaluating
            return super().sample(*args, **kwargs)

        def _init_sampler(self, **kwargs: Any) -> Any:
            # The grammar is checked on the chain's pick first (see llamacpp_sampler); custom
            # logits processors keep llama-cpp-python's own chain.
            grammar = kwargs.get("grammar")
            if not self.grammar_last or grammar is None or kwargs.get("logits_processor"):
                return super()._init_sampler(**kwargs)
            chain = super()._init_sampler(**{**kwargs, "grammar": None})
            return GrammarLastSampler(chain, self._model, grammar, self._n_vocab)

        def save_state(self) -> Any:
            size = llama_cpp.llama_state_get_size(self._ctx.ctx)
            buffer = (ctypes.c_uint8 * int(size))()
            written = int(llama_cpp.llama_state_get_data(self._ctx.ctx, buffer, size))
            return LlamaState(
                input_ids=self.input_ids.copy(),
                scores=np.empty((0, self._n_vocab), dtype=np.single),
                n_tokens=self.n_tokens,
                llama_state=bytes(buffer)[:written],
                llama_state_size=written,
                seed=self._seed,
            )

        def load_state(self, state: Any) -> None:
            self.input_ids = state.input_ids.copy()
            self.n_tokens = state.n_tokens
            self._requires_eval = True  # the next generate re-evaluates, refreshing the logits
            self._seed = state.seed
            data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
            if llama_cpp.llama_state_set_data(self._ctx.ctx, data, state.llama_state_size) != (
                state.llama_state_size
            ):
                raise RuntimeError("llama.cpp refused a saved prefix state")

    return CountingLlama

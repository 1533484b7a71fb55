"""The grammar-last sampler on the real SmolLM2: the same greedy text, the grammar still obeyed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from freyr_dspy.backends._embedded import shared_engine
from freyr_dspy.backends._llamacpp_grammar import schema_grammar
from freyr_dspy.backends._llamacpp_sampler import GrammarLastSampler

pytestmark = pytest.mark.embedded

MODEL = "embedded/smollm2-135m"
SCHEMA = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": {"enum": ["get_weather", "send_email", "add_task"]},
            "maxItems": 2,
        },
        "city": {"type": "string", "maxLength": 24},
    },
    "required": ["tools", "city"],
}
ASK = [
    {"role": "system", "content": "Answer in JSON."},
    {"role": "user", "content": "Which tool tells me whether it rains in Oslo?"},
]


def _complete(
    llama: Any, *, grammar_last: bool, temperature: float = 0.0
) -> tuple[str, list[GrammarLastSampler]]:
    """A completion under SCHEMA's grammar, and the grammar-last samplers it used."""
    from llama_cpp import LlamaGrammar

    made: list[GrammarLastSampler] = []
    build = llama._init_sampler

    def init_sampler(**kwargs: Any) -> Any:
        sampler = build(**kwargs)
        if isinstance(sampler, GrammarLastSampler):
            made.append(sampler)
        return sampler

    grammar = LlamaGrammar.from_string(schema_grammar(json.dumps(SCHEMA)), verbose=False)
    llama.grammar_last = grammar_last
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(llama, "_init_sampler", init_sampler)  # to read the sampler's counters
        reply = llama.create_chat_completion(
            messages=ASK, temperature=temperature, max_tokens=120, grammar=grammar
        )
    llama.grammar_last = True
    return str(reply["choices"][0]["message"]["content"]), made


def test_greedy_text_is_the_grammar_first_chains_and_obeys_the_schema() -> None:
    engine = shared_engine(MODEL)
    with engine._lock:
        llama = engine._model()
        first, eager = _complete(llama, grammar_last=False)
        last, samplers = _complete(llama, grammar_last=True)
    assert eager == []  # llama-cpp-python's own chain, grammar first
    assert last == first
    answer = json.loads(last)
    assert set(answer) == {"tools", "city"}
    assert set(answer["tools"]) <= {"get_weather", "send_email", "add_task"}
    assert len(answer["tools"]) <= 2 and len(answer["city"]) <= 24
    (sampler,) = samplers
    assert sampler.sampled > 0
    # A 135M model's own first picks break the JSON frame at times; each was redrawn.
    assert 0 < sampler.refused < sampler.sampled


def test_sampled_text_obeys_the_schema() -> None:
    """With temperature the refused draws are redrawn under the grammar: still valid JSON."""
    engine = shared_engine(MODEL)
    with engine._lock:
        llama = engine._model()
        texts = [_complete(llama, grammar_last=True, temperature=1.2)[0] for _ in range(3)]
    for text in texts:
        answer = json.loads(text)
        assert set(answer["tools"]) <= {"get_weather", "send_email", "add_task"}
        assert len(answer["tools"]) <= 2 and len(answer["city"]) <= 24

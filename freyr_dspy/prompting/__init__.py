"""What a role's prompt is made of, and how its answer is read back.

``contracts`` types each role's output (a JSON schema the llama.cpp grammar enforces),
``narrowing`` narrows those schemas for a retry, ``adapters`` formats prompts (lean, json,
chat), ``placeholders`` says what an empty context input holds (and the lean prompt leaves
out), ``parsing`` reads small models' malformed answers tolerantly, and ``demo_pool`` keeps
the demos a role picks from per request.
"""

from freyr_dspy.prompting._adapters import FreyrChatAdapter, LeanAdapter, make_adapter
from freyr_dspy.prompting._contracts import (
    Contract,
    JsonSchema,
    enforces_schema,
    json_text_fields,
    name_schema,
    names_schema,
    output_schema,
    pattern_literal,
    with_contract,
)
from freyr_dspy.prompting._demo_pool import (
    DEMO_META,
    POOL_ATTRIBUTE,
    REQUEST_FIELDS,
    attach_pool,
    check_pool,
    demos_for,
    detach_pool,
    pool_size,
    pool_state,
    request_field,
)
from freyr_dspy.prompting._narrowing import choose_from, forbid_values, offered_choices
from freyr_dspy.prompting._parsing import (
    CONVERSATION,
    MAX_NESTED_JSON,
    load_json,
    match_names,
    parse_arguments,
    parse_text,
    split_items,
    strip_fences,
    valid_strings,
    valid_unicode,
)
from freyr_dspy.prompting._placeholders import (
    CONTEXT_PLACEHOLDERS,
    NO_CONVERSATION,
    NO_FEEDBACK,
    NO_OBSERVATIONS,
    NO_STATE,
    says_nothing,
)
from freyr_dspy.prompting._scoring import PromptFormatter, Scores, ScoringEngine

__all__ = [
    "CONTEXT_PLACEHOLDERS",
    "CONVERSATION",
    "DEMO_META",
    "MAX_NESTED_JSON",
    "NO_CONVERSATION",
    "NO_FEEDBACK",
    "NO_OBSERVATIONS",
    "NO_STATE",
    "POOL_ATTRIBUTE",
    "REQUEST_FIELDS",
    "Contract",
    "FreyrChatAdapter",
    "JsonSchema",
    "LeanAdapter",
    "PromptFormatter",
    "Scores",
    "ScoringEngine",
    "attach_pool",
    "check_pool",
    "choose_from",
    "demos_for",
    "detach_pool",
    "enforces_schema",
    "forbid_values",
    "json_text_fields",
    "load_json",
    "make_adapter",
    "match_names",
    "name_schema",
    "names_schema",
    "offered_choices",
    "output_schema",
    "parse_arguments",
    "parse_text",
    "pattern_literal",
    "pool_size",
    "pool_state",
    "request_field",
    "says_nothing",
    "split_items",
    "strip_fences",
    "valid_strings",
    "valid_unicode",
    "with_contract",
]  # the rest: see the submodules (above)

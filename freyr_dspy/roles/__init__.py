"""The roles: one DSPy module per role, registered under its snake_case id.

Role ids are identical everywhere: program attributes, artifact keys, Optuna parameter names
and CLI options (``--model intent=...``). Strategies add their own roles to ``ROLES``.
"""

from __future__ import annotations

from freyr_dspy.roles._asks import ASK_WORDS_MOST, NO_TOOL, asks_contract
from freyr_dspy.roles._base import Role
from freyr_dspy.roles._chat import ChatResponder, ChatSignature
from freyr_dspy.roles._confirm import confirm_contract, confirmed
from freyr_dspy.roles._intent import IntentClassifier, IntentSignature, intent_contract
from freyr_dspy.roles._library import Gate, library_contract, read_gate
from freyr_dspy.roles._parameters import (
    ParameterFiller,
    ParametersSignature,
    give_up_feedback,
    gives_up,
    one_call_note,
    parameters_contract,
    several_calls_contract,
    several_calls_note,
)
from freyr_dspy.roles._prompted import ToolRequest, extract_calls
from freyr_dspy.roles._registry import ROLES, load_roles, register_role, role_class
from freyr_dspy.roles._signature_dump import signature_hash, write_signature_dumps
from freyr_dspy.roles._summary import Summarizer, SummarySignature
from freyr_dspy.roles._tool_selection import (
    Assessment,
    assess,
    render_selection_catalog,
    selection_contract,
)

__all__ = [
    "ASK_WORDS_MOST",
    "NO_TOOL",
    "ROLES",
    "Assessment",
    "ChatResponder",
    "ChatSignature",
    "Gate",
    "IntentClassifier",
    "IntentSignature",
    "ParameterFiller",
    "ParametersSignature",
    "Role",
    "Summarizer",
    "SummarySignature",
    "ToolRequest",
    "asks_contract",
    "assess",
    "confirm_contract",
    "confirmed",
    "extract_calls",
    "give_up_feedback",
    "gives_up",
    "intent_contract",
    "library_contract",
    "load_roles",
    "one_call_note",
    "parameters_contract",
    "read_gate",
    "register_role",
    "render_selection_catalog",
    "role_class",
    "selection_contract",
    "several_calls_contract",
    "several_calls_note",
    "signature_hash",
    "write_signature_dumps",
]

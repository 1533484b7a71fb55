"""What a role's prompt is made of, and how its answer is read back.

``contracts`` types each role's output (a JSON schema the llama.cpp grammar enforces),
``narrowing`` narrows those schemas for a retry, ``adapters`` formats prompts (lean, json,
chat), ``placeholders`` says what an empty context input holds (and the lean prompt leaves
out), ``parsing`` reads small models' malformed answers tolerantly, and ``demo_pool`` keeps
the demos a role picks from per request.
"""

from freyr_dspy.prompting._adapters import make_adapter

__all__ = ["make_adapter"]  # the rest: see the submodules (above)

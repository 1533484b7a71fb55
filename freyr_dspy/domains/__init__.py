"""Registry of domains: name -> ``Domain``. Benchmarks add their own domains here."""

from __future__ import annotations

from freyr_dspy._plugins import Registry
from freyr_dspy.domains.base import Domain, StateRenderer, render_json_state
from freyr_dspy.domains.example import TODO

#: The benchmarks' domains register themselves when imported (kept lazy: some are heavy).
DOMAINS: Registry[Domain] = Registry(
    "domain",
    ("freyr_dspy.llmaker.domain", "freyr_dspy.nlt.domain", "freyr_dspy.callnavi.domain"),
    TODO,
)
register_domain = DOMAINS.register
get_domain = DOMAINS.get_named


__all__ = [
    "DOMAINS",
    "Domain",
    "StateRenderer",
    "get_domain",
    "register_domain",
    "render_json_state",
]

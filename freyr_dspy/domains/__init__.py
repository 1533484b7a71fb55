"""Registry of domains: name -> ``Domain``. Benchmarks add their own domains here."""

from __future__ import annotations

from freyr_dspy.domains._base import Domain, StateRenderer, render_json_state
from freyr_dspy.domains._example import TODO, TodoState
from freyr_dspy.domains._plain import PLAIN_DOMAIN_NAME, plain_domain
from freyr_dspy.registry import Registry

#: The benchmarks' domains register themselves from their plugins (``freyr_dspy.registry``).
DOMAINS: Registry[Domain] = Registry("domain", todo=TODO)
get_domain = DOMAINS.get_named


def register_domain(domain: Domain) -> None:
    """Add (or replace) a domain under its name."""
    DOMAINS.register(domain.name, domain)


__all__ = [
    "DOMAINS",
    "PLAIN_DOMAIN_NAME",
    "TODO",
    "Domain",
    "StateRenderer",
    "TodoState",
    "get_domain",
    "plain_domain",
    "register_domain",
    "render_json_state",
]

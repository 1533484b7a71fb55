"""Registry of domains: name -> ``Domain``. Benchmarks add their own domains here."""

from __future__ import annotations

from freyr_dspy.domains.base import Domain, StateRenderer, render_json_state
from freyr_dspy.domains.example import TODO
from freyr_dspy.errors import UnknownNameError

DOMAINS: dict[str, Domain] = {TODO.name: TODO}

#: Modules that register further domains when imported.
DOMAIN_MODULES = (
    "freyr_dspy.llmaker.domain",
    "freyr_dspy.nlt.domain",
    "freyr_dspy.callnavi.domain",
)


def get_domain(name: str) -> Domain:
    """Return the registered domain called ``name``.

    Raises:
        UnknownNameError: with the registered names and a "did you mean".
    """
    if name not in DOMAINS:
        _load_optional_domains()
    if name not in DOMAINS:
        raise UnknownNameError("domain", name, DOMAINS)
    return DOMAINS[name]


def register_domain(domain: Domain) -> None:
    """Add (or replace) a domain in the registry."""
    DOMAINS[domain.name] = domain


def _load_optional_domains() -> None:
    """Import the domain modules that register themselves (kept lazy: some are heavy)."""
    from freyr_dspy._plugins import import_optional

    import_optional(DOMAIN_MODULES)


__all__ = [
    "DOMAINS",
    "Domain",
    "StateRenderer",
    "get_domain",
    "register_domain",
    "render_json_state",
]

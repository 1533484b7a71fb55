"""NLT (Natural Language Tools) scenarios: data loading, domains and the benchmarks."""

__all__: list[str] = []  # see the submodules: data, domain, benchmark, summary

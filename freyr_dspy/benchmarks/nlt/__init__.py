"""NLT (Natural Language Tools) scenarios: data loading, domains and the benchmarks."""

"""The episodes a search evaluates: ``--limit N`` spreads N picks over the whole split."""

from freyr_dspy.benchmark import Episode, Step, spread


def _episodes(n: int) -> list[Episode]:
    return [
        Episode(id=f"e{i}", case="c", steps=(Step(id=f"e{i}", message=f"m{i}"),)) for i in range(n)
    ]


def test_spread_picks_evenly_from_start_to_end_in_order() -> None:
    picked = [e.id for e in spread(_episodes(49), 10)]
    assert picked == ["e0", "e4", "e9", "e14", "e19", "e24", "e29", "e34", "e39", "e44"]


def test_spread_without_a_limit_or_a_larger_one_keeps_every_episode() -> None:
    assert [e.id for e in spread(_episodes(3), None)] == ["e0", "e1", "e2"]
    assert [e.id for e in spread(_episodes(3), 5)] == ["e0", "e1", "e2"]


def test_spread_never_repeats_an_episode() -> None:
    for total in range(1, 30):
        for limit in range(1, total + 1):
            ids = [e.id for e in spread(_episodes(total), limit)]
            assert len(ids) == len(set(ids)) == limit

"""search_assignments on fakes with per-model skill tables: optimum, seeding, cache, failures,
resume, storages."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest

from freyr_dspy.errors import ConfigError, UnknownModelError, UnknownNameError, UnknownRoleError
from freyr_dspy.search import SearchSpace, baseline, format_table, search_assignments
from freyr_dspy.search._study import CACHE_DIR
from freyr_dspy.settings import Settings
from freyr_dspy.studies import open_storage
from tests.support import search_fixtures as fx

IP, PP, BROKEN = fx.INTENT_PRO, fx.PARAM_PRO, fx.BROKEN


@pytest.fixture(autouse=True)
def skills() -> Iterator[None]:
    fx.install()
    yield
    fx.uninstall()


def models_only(**candidates: tuple[str, ...]) -> SearchSpace:
    """A space where only the models vary: configurations repeat, so the cache serves them."""
    lists = {"*": (IP,), **candidates}
    return SearchSpace(
        candidates=lists, temperature=None, top_p=None, top_k=None, max_retries=(1, 1)
    )


def run(settings: Settings, space: SearchSpace, n_trials: int, **kwargs: Any) -> Any:
    kwargs.setdefault("report", False)
    kwargs.setdefault("split", "test")
    return search_assignments("skills", space, n_trials=n_trials, settings=settings, **kwargs)


def models(trial: Any) -> tuple[str, str]:
    assignment = trial.config["assignment"]
    return assignment["intent"]["model"], assignment["parameters"]["model"]


def test_seeded_study_finds_the_known_best_assignment(settings: Settings) -> None:
    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    result = run(settings, space, 8, seed=3)

    assert result.best is not None
    assert models(result.best) == (IP, PP)
    assert result.best.values["accuracy"] == 1.0
    first = result.trials[0]
    assert first.baseline and models(first) == (PP, IP)  # the default configuration ran first
    assert first.values["accuracy"] == 0.0
    assert result.baseline is first
    assert all(t.values["accuracy"] < 1.0 for t in result.trials if models(t) != (IP, PP))


def test_the_same_seed_gives_the_same_trials(tmp_path: Path) -> None:
    space = SearchSpace(candidates={"*": (IP, PP)}, max_retries=(0, 2))

    def params(seed: int, folder: str) -> list[dict[str, Any]]:
        result = run(Settings(project_dir=tmp_path / folder), space, 3, seed=seed, cache=False)
        return [t.config for t in result.trials]

    first = params(7, "a")
    assert first == params(7, "b")
    assert first != params(8, "c")


def test_a_repeated_configuration_costs_nothing(settings: Settings) -> None:
    space = models_only(intent=(PP, IP))  # only two configurations exist
    before = fx.lm_calls()
    first = run(settings, space, 6)
    calls_for_two = fx.lm_calls() - before

    cached = [t for t in first.trials if t.cached]
    assert len(cached) == 4 and first.cache_hits == 4
    assert {models(t) for t in first.trials} == {(PP, IP), (IP, IP)}
    assert all(
        t.values == next(u for u in first.trials if u.config == t.config and not u.cached).values
        for t in cached
    )

    # Another study (new name) over the same configurations: every trial is a cache hit.
    again = run(settings, space, 3, study_name="second")
    assert fx.lm_calls() - before == calls_for_two
    assert all(t.cached for t in again.trials)
    assert (settings.project_dir / CACHE_DIR).is_dir()


def test_a_failing_model_fails_its_trial_and_the_study_goes_on(settings: Settings) -> None:
    space = models_only(intent=(BROKEN, IP), parameters=(PP,))
    result = run(settings, space, 5)

    failed = [t for t in result.trials if t.state == "FAIL"]
    assert failed and all(models(t)[0] == BROKEN for t in failed)
    assert failed[0].number == 0  # the baseline used the broken model
    assert "model failed on 3/3 steps" in (failed[0].failure or "")
    assert "connection refused" in (failed[0].failure or "")
    assert result.best is not None and models(result.best) == (IP, PP)
    assert "failed trial(s); first: #0 model failed on 3/3 steps" in format_table(result)
    # failures are not cached: a later trial of the broken model calls it again
    assert len(fx.ENGINES[BROKEN].calls) == len(failed) * 3


def test_a_crashing_trial_is_recorded_with_its_reason(settings: Settings) -> None:
    def demo_boom(program: Any, k: int, config: Any) -> Any:
        raise RuntimeError("demo store unavailable")

    space = SearchSpace(
        candidates={"*": (IP,)},
        temperature=None,
        top_p=None,
        top_k=None,
        max_retries=(1, 1),
        num_demos=(1, 2),
    )
    result = run(settings, space, 3, demo_fn=demo_boom)

    assert [t.state for t in result.trials] == ["FAIL"] * 3
    assert all(t.failure == "RuntimeError: demo store unavailable" for t in result.trials)
    assert result.best is None and result.pareto == ()


def test_resume_after_an_interruption_continues_to_the_total(settings: Settings) -> None:
    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    storage = settings.project_dir / "study.journal"

    def stop_after_three(study: Any, trial: Any) -> None:
        if len(study.trials) >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run(settings, space, 7, storage=storage, callbacks=[stop_after_three])
    study = optuna.load_study(study_name=None, storage=open_storage(storage))
    assert len(study.trials) == 3

    result = run(settings, space, 7, storage=storage)
    assert [t.number for t in result.trials] == list(range(7))
    assert all(t.state == "COMPLETE" for t in result.trials)
    assert sum(t.baseline for t in result.trials) == 1
    assert result.trials[0].config == study.trials[0].user_attrs["config"]

    # Running the finished command again runs nothing.
    before = fx.lm_calls()
    assert len(run(settings, space, 7, storage=storage).trials) == 7
    assert fx.lm_calls() == before


def test_a_trial_cut_by_an_interruption_runs_again(settings: Settings) -> None:
    state = {"interrupt": True}

    def flaky(call: Any) -> Any:
        if state["interrupt"] and call.role == "intent":
            raise KeyboardInterrupt
        return fx.intent_pro(call)

    fx.ENGINES[IP].fn = flaky
    space = models_only(intent=(IP, PP))
    storage = settings.project_dir / "study.journal"
    with pytest.raises(KeyboardInterrupt):
        run(settings, space, 3, storage=storage)

    state["interrupt"] = False
    result = run(settings, space, 3, storage=storage)
    lost = [t for t in result.trials if t.failure == "interrupted"]
    assert [t.number for t in lost] == [0] and lost[0].state == "FAIL"
    finished = [t for t in result.trials if t.state == "COMPLETE"]
    assert len(finished) == 3  # the lost trial does not count toward the total
    assert finished[0].baseline and finished[0].config == lost[0].config


def test_a_dead_workers_running_trial_is_failed_and_run_again(settings: Settings) -> None:
    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    storage = settings.project_dir / "study.journal"
    first = run(settings, space, 1, storage=storage)
    study = optuna.load_study(study_name=first.study_name, storage=open_storage(storage))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    study.enqueue_trial({"model.intent": IP, "model.parameters": PP})
    orphan = study.ask()  # takes the queued configuration, then its worker "dies"
    orphan.suggest_categorical("model.intent", [PP, IP])
    orphan.suggest_categorical("model.parameters", [IP, PP])
    orphan.set_user_attr("worker", f"{__import__('socket').gethostname()}:{dead}")

    result = run(settings, space, 3, storage=storage)
    stale = result.trials[orphan.number]
    assert stale.state == "FAIL" and stale.failure == "worker died"
    assert sum(t.state == "COMPLETE" for t in result.trials) == 3
    rerun = [t for t in result.trials if t.number > orphan.number]
    assert models(rerun[0]) == (IP, PP)


def test_a_lost_configuration_already_queued_is_not_queued_twice() -> None:
    from optuna.distributions import CategoricalDistribution
    from optuna.trial import TrialState, create_trial

    from freyr_dspy.search._study import enqueue, prepare_study

    space = models_only(intent=(PP, IP))
    _, default = baseline(space)
    other = {name: next(v for v in (PP, IP) if v != value) for name, value in default.items()}
    study = optuna.create_study()
    study.add_trial(
        create_trial(
            state=TrialState.FAIL,
            params=other,
            distributions={name: CategoricalDistribution([PP, IP]) for name in other},
            user_attrs={"failure": "interrupted"},
        )
    )
    enqueue(study, other)  # another worker queued it again before this one resumes
    prepare_study(study, space)
    prepare_study(study, space)  # a second resume queues nothing more
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert sorted(t.user_attrs["queued_params"] == other for t in waiting) == [False, True]
    assert [t.user_attrs.get("baseline", False) for t in waiting] == [False, True]


@pytest.mark.parametrize("kind", ["journal", "sqlite"])
def test_storage_urls_hold_a_resumable_study(settings: Settings, kind: str) -> None:
    folder = settings.project_dir
    storage = str(folder / "s.journal") if kind == "journal" else f"sqlite:///{folder}/s.db"
    space = models_only(intent=(PP, IP))
    result = run(settings, space, 1, storage=storage, study_name="shared")
    assert result.storage.startswith("journal:" if kind == "journal" else "sqlite:///")

    run(settings, space, 2, storage=storage, study_name="shared")
    study = optuna.load_study(study_name="shared", storage=open_storage(storage))
    assert len(study.trials) == 2
    assert study.user_attrs["freyr"]["benchmark"] == "skills"


@pytest.mark.filterwarnings(
    "ignore:Heartbeat of storage:UserWarning"
)  # ask() is used, not optimize
def test_a_silent_workers_trial_on_an_rdb_is_failed_and_queued_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time
    import warnings

    from freyr_dspy.studies import _storage as storage_module

    monkeypatch.setattr(storage_module, "HEARTBEAT_INTERVAL", 1)
    monkeypatch.setattr(storage_module, "GRACE_PERIOD", 1)
    storage = open_storage(f"sqlite:///{tmp_path}/s.db")
    study = optuna.create_study(storage=storage, study_name="s")
    trial = study.ask()
    x = trial.suggest_int("x", 0, 10)
    storage.record_heartbeat(trial._trial_id)  # the worker beat once, then died
    time.sleep(2.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)  # what a live worker's next trial runs

    states = [t.state.name for t in study.get_trials(deepcopy=False)]
    assert states == ["FAIL", "WAITING"]
    assert study.get_trials(deepcopy=False)[1].params == {"x": x}  # the same configuration


def test_a_study_name_of_another_search_is_refused(settings: Settings) -> None:
    storage = settings.project_dir / "study.journal"
    run(settings, models_only(intent=(PP, IP)), 1, storage=storage, study_name="x")
    with pytest.raises(ConfigError, match="another search"):
        run(settings, models_only(intent=(IP, PP, BROKEN)), 2, storage=storage, study_name="x")
    with pytest.raises(ConfigError):
        run(
            settings,
            models_only(intent=(PP, IP)),
            2,
            storage=storage,
            study_name="x",
            objectives=["accuracy"],
        )


@pytest.mark.parametrize(
    ("space", "objectives", "error"),
    [
        ({"*": ["fake/nobody"]}, ["accuracy"], UnknownModelError),
        ({"intnt": [IP]}, ["accuracy"], UnknownRoleError),
        ({"*": [IP]}, ["speed"], UnknownNameError),
        ({"*": [IP]}, ["accuracy", "accuracy"], ConfigError),
    ],
)
def test_bad_searches_fail_before_any_trial(
    settings: Settings, space: dict[str, list[str]], objectives: list[str], error: type
) -> None:
    with pytest.raises(error):
        run(settings, space, 2, objectives=objectives)  # type: ignore[arg-type]
    assert fx.lm_calls() == 0
    assert not (settings.project_dir / "runs").exists()


def test_report_files_are_written(settings: Settings) -> None:
    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    result = run(settings, space, 5, objectives=["accuracy", "tokens", "latency"], report=True)

    files = result.files
    assert {"report", "pareto_csv", "trials_csv", "history", "pareto_front"} <= set(files)
    assert all(path.is_file() for path in files.values())
    assert (files["history"].parent / "plotly.min.js").is_file()
    header = files["trials_csv"].read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("trial,state,baseline,cached,accuracy,tokens,latency,strategy")
    assert len(files["trials_csv"].read_text(encoding="utf-8").splitlines()) == 6
    svg = files["pareto_svg"].read_text(encoding="utf-8")
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")


def test_the_svg_plot_marks_the_front_the_baseline_and_the_best(settings: Settings) -> None:
    from xml.etree import ElementTree

    from freyr_dspy.search._svg import pareto_svg

    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    result = run(settings, space, 8, seed=3)
    svg = pareto_svg(result)
    assert svg is not None
    root = ElementTree.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text or "" for t in root.iter(f"{ns}title")]
    finished = [t for t in result.trials if t.state == "COMPLETE"]
    assert len(titles) == len(finished)  # one dot per finished trial
    filled = [c for c in root.iter(f"{ns}circle") if c.get("fill") == "#1f6fb4"]
    front = {t.number for t in result.pareto}
    assert len(filled) == len([t for t in finished if t.number in front and not t.baseline]) + 1
    labels = {t.text for t in root.iter(f"{ns}text")}
    assert {str(n) for n in front} <= labels
    assert len([r for r in root.iter(f"{ns}rect") if r.get("stroke")]) == 2  # baseline + legend
    assert any(c.get("stroke") == "#d62728" and c.get("cx") for c in root.iter(f"{ns}circle"))


def test_no_svg_plot_without_a_finished_trial(settings: Settings) -> None:
    from dataclasses import replace

    from freyr_dspy.search._svg import pareto_svg

    result = run(settings, models_only(), 1)
    failed = [replace(t, state="FAIL") for t in result.trials]
    assert pareto_svg(replace(result, trials=tuple(failed), pareto=())) is None


def test_demos_come_from_trainset_steps_the_search_does_not_evaluate(settings: Settings) -> None:
    from freyr_dspy.benchmarks import EvalOptions, get_benchmark
    from freyr_dspy.search._objective import build_trial_program
    from freyr_dspy.search._study import evaluation_inputs

    space = SearchSpace(
        candidates={"intent": (IP,), "*": (PP,)},
        temperature=None,
        top_p=None,
        top_k=None,
        max_retries=(1, 1),
        num_demos=(0, 2),
    )
    bench, options = get_benchmark("skills"), EvalOptions(data_dir=settings.project_dir)
    episodes, demo_fn = evaluation_inputs(
        bench, space, settings, options, episodes=None, split="dev", demo_fn=None
    )
    assert demo_fn is not None and 1 <= len(episodes) < len(fx.CASES)
    config, _ = baseline(space)
    program = build_trial_program(
        bench, config.model_copy(update={"num_demos": 2}), options, demo_fn
    )

    demos = [d for p in program.predictors() for d in p.demos]
    evaluated = {s.message for e in episodes for s in e.steps}
    assert demos and {d["message"] for d in demos if "message" in d}.isdisjoint(evaluated)
    assert program.role("intent").predict.lm.model == IP  # the models survive compiling the demos

    result = run(settings, space, 4, split="dev")
    assert {t.config["num_demos"] for t in result.trials} <= {0, 1, 2}
    assert all(t.state == "COMPLETE" for t in result.trials)


def test_trials_run_in_threads_with_jobs(settings: Settings) -> None:
    space = models_only(intent=(PP, IP), parameters=(IP, PP))
    result = run(settings, space, 6, jobs=2, cache=False)
    assert sum(t.state == "COMPLETE" for t in result.trials) >= 6
    assert all(
        t.values["accuracy"] == (1.0 if models(t) == (IP, PP) else 0.0) for t in result.trials
    )

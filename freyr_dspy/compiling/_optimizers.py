"""The optimizers ``freyr compile`` offers, one small runner each, behind one config.

* ``labeled``: demos per role from the trainset's gold calls; no LM call (``gold``).
* ``nearest``: ``labeled``, but every gold demo is kept in a pool and each request is shown
  the ``max_demos`` training requests most like it (``demo_pool``); no LM call.
* ``misses``: ``labeled``, with the demos taken from the training requests the uncompiled
  program gets wrong (one run of it per request).
* ``bootstrap``: demos the teacher got right; one run per train example
  (``BootstrapFewShot``).
* ``bootstrap_rs``: the best of ``budget`` bootstrapped demo sets, each scored on the
  trainset (``BootstrapFewShotWithRandomSearch``).
* ``mipro``: instructions and demos over ``budget`` trials, with a prompt model
  (``MIPROv2``).
* ``gepa``: instructions, by reflecting on metric feedback; ``budget`` metric calls
  (``GEPA``).
* ``simba``: demos and rules from hard examples; ``budget`` steps (``SIMBA``).

The bootstrap-style teachers start from the gold-labelled demos (DSPy's own ``BootstrapFewShot``
puts labelled examples into its teacher the same way), so even a tiny teacher has examples of
every role. Runners may return a program whose predictors lost their LMs
(``reset_copy``); ``compile_program`` re-applies them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import dspy

from freyr_dspy.backends import make_lm
from freyr_dspy.compiling._gepa import RanPredictorsSelector
from freyr_dspy.compiling._gold import (
    detached_copy,
    gold_demos,
    select_demos,
    shorten,
    without_meta,
)
from freyr_dspy.compiling._metrics import BenchmarkMetric, FeedbackMetric
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.prompting import REQUEST_FIELDS, attach_pool, detach_pool, pool_size, pool_state
from freyr_dspy.schemas import (
    OPTIMIZER_NAMES,
    OptimizerConfig,
    RoleModel,
    Sampling,
)

__all__ = ["OPTIMIZER_NAMES", "OptimizerConfig", "optimize", "trimmed_demo"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Job:
    """What one optimizer run gets."""

    program: FreyrProgram
    trainset: list[dspy.Example]
    metric: BenchmarkMetric
    config: OptimizerConfig


def optimize(
    config: OptimizerConfig,
    program: FreyrProgram,
    trainset: list[dspy.Example],
    metric: BenchmarkMetric,
) -> FreyrProgram:
    """Run one optimizer on ``program``; the input program is left untouched.

    Raises:
        ConfigError: when the trainset is empty or the optimizer cannot work with the
            program (e.g. SIMBA with different models per role).
    """
    if not trainset:
        raise ConfigError("the trainset is empty; add rows to trainsets/<name>.jsonl")
    if config.name == "nearest" and set(config.demo_omit) & set(REQUEST_FIELDS):
        raise ConfigError("nearest matches demos on the request: do not --demo-omit it")
    if config.name not in _KEEP_POOL:
        program = _without_pools(program)
    job = _Job(program=program, trainset=list(trainset), metric=metric, config=config)
    compiled = _RUNNERS[config.name](job)
    for role in compiled.role_names:
        keep = config.demo_roles is None or role in config.demo_roles
        for predictor in compiled.role(role).predictors():
            _settle_demos(predictor, config, keep=keep)
    return compiled


#: Optimizers that leave the demos as they were (a pool from ``--start`` stays in use); the
#: others choose demos themselves, which a pool would override at run time.
_KEEP_POOL = frozenset({"nearest", "gepa"})


def _without_pools(program: FreyrProgram) -> FreyrProgram:
    """A copy whose predictors show their fixed demos, for optimizers that choose demos.

    A pool from ``--start`` would otherwise override the candidates' demos while they are
    scored, and the teacher's.
    """
    if not any(pool_size(p) for p in program.predictors()):
        return program
    copy = detached_copy(program)
    for predictor in copy.predictors():
        detach_pool(predictor)
    return copy


def _settle_demos(predictor: dspy.Predict, config: OptimizerConfig, *, keep: bool) -> None:
    """Trim the fixed demos and the pool, or drop both on a role that keeps no demos."""
    pool = pool_state(predictor) if config.name in _KEEP_POOL else None
    detach_pool(predictor)
    if not keep:
        predictor.demos = []
        return
    predictor.demos = [trimmed_demo(d, predictor, config) for d in predictor.demos]
    if pool:
        trimmed = [trimmed_demo(dspy.Example(**demo), predictor, config) for demo in pool["demos"]]
        attach_pool(predictor, trimmed, pool["k"])


def trimmed_demo(
    demo: dspy.Example, predictor: dspy.Predict, config: OptimizerConfig
) -> dspy.Example:
    """A demo without the omitted input fields, its long inputs cut; answers stay whole."""
    omitted = set(config.demo_omit) - set(predictor.signature.output_fields)
    if omitted:
        demo = dspy.Example(**{k: v for k, v in demo.items() if k not in omitted})
    if config.demo_field_maxlen:
        keep = list(predictor.signature.output_fields)
        demo = shorten(demo, config.demo_field_maxlen, keep=keep)
    return demo


def _labeled(job: _Job) -> FreyrProgram:
    compiled = detached_copy(job.program)
    apply_gold_demos(compiled, job.trainset, job.metric, job.config)
    return compiled


def apply_gold_demos(
    program: FreyrProgram,
    trainset: list[dspy.Example],
    metric: BenchmarkMetric,
    config: OptimizerConfig,
) -> None:
    """Give every role up to ``max_demos`` gold-labelled demos (in place)."""
    demos = gold_demos(program, trainset, metric)
    for name, predictor in program.named_predictors():
        predictor.demos = select_demos(
            demos.get(name, []),
            config.max_demos,
            outputs=list(predictor.signature.output_fields),
            seed=config.seed,
            maxlen=config.demo_field_maxlen,
        )


def _nearest(job: _Job) -> FreyrProgram:
    """Every gold demo in a pool; each request is shown the nearest ``max_demos`` of them.

    The fixed demos (the ``labeled`` choice) stay as the fallback for a call whose request
    field is empty or missing.
    """
    compiled = detached_copy(job.program)
    demos = gold_demos(compiled, job.trainset, job.metric)
    for name, predictor in compiled.named_predictors():
        pool = demos.get(name, [])
        outputs = list(predictor.signature.output_fields)
        predictor.demos = select_demos(
            pool, job.config.max_demos, outputs=outputs, seed=job.config.seed
        )
        attach_pool(predictor, pool, job.config.max_demos)
    return compiled


def _misses(job: _Job) -> FreyrProgram:
    """Gold demos from the requests the student gets wrong, topped up from the rest.

    A demo of what the model already does right teaches it little: the requests it misses
    show the distinctions it lacks (a new room joined to another is ``create_room``, not
    ``add_corridor``). Each training request is run once on the uncompiled program.
    """
    missed = [example for example in job.trainset if not _solved(job, example)]
    logger.info(
        "the uncompiled program missed %d of %d training requests", len(missed), len(job.trainset)
    )
    compiled = detached_copy(job.program)
    from_missed = gold_demos(compiled, missed, job.metric)
    from_all = gold_demos(compiled, job.trainset, job.metric)
    for name, predictor in compiled.named_predictors():
        outputs = list(predictor.signature.output_fields)
        k, seed = job.config.max_demos, job.config.seed
        chosen = select_demos(from_missed.get(name, []), k, outputs=outputs, seed=seed)
        rest = [demo for demo in from_all.get(name, []) if without_meta(demo) not in chosen]
        chosen += select_demos(rest, k - len(chosen), outputs=outputs, seed=seed)
        predictor.demos = chosen
    return compiled


def _solved(job: _Job, example: dspy.Example) -> bool:
    """Whether the uncompiled program completes one training request."""
    prediction = job.program(**example.inputs())
    return job.metric(example, prediction) >= 1.0


def _bootstrap(job: _Job) -> FreyrProgram:
    optimizer = dspy.BootstrapFewShot(
        metric=job.metric,
        max_bootstrapped_demos=job.config.max_demos,
        max_labeled_demos=0,
        max_rounds=1,
        max_errors=len(job.trainset) + 1,
    )
    compiled: FreyrProgram = optimizer.compile(
        job.program, teacher=_teacher(job), trainset=job.trainset
    )
    return compiled


def _bootstrap_rs(job: _Job) -> FreyrProgram:
    optimizer = dspy.BootstrapFewShotWithRandomSearch(
        metric=job.metric,
        max_bootstrapped_demos=job.config.max_demos,
        max_labeled_demos=0,
        num_candidate_programs=job.config.effective_budget,
        num_threads=job.config.num_threads,
        max_errors=len(job.trainset) * (job.config.effective_budget + 3) + 1,
    )
    # NOTE: the candidates it scores come from reset_copy() and have no LMs; the context LM
    # plays every role then (exact when all roles share a model, as they usually do).
    with dspy.context(lm=_shared_lm(job.program)):
        compiled: FreyrProgram = optimizer.compile(
            job.program, teacher=_teacher(job), trainset=job.trainset
        )
    return compiled


def _mipro(job: _Job) -> FreyrProgram:
    budget = job.config.effective_budget
    optimizer = dspy.MIPROv2(
        metric=job.metric,
        prompt_model=_prompt_lm(job),
        task_model=_shared_lm(job.program),
        max_bootstrapped_demos=job.config.max_demos,
        max_labeled_demos=0,
        auto=None,
        num_candidates=max(2, min(budget, 6)),
        num_threads=job.config.num_threads,
        seed=job.config.seed,
        verbose=False,
        max_errors=len(job.trainset) * budget + 1,
    )
    compiled: FreyrProgram = optimizer.compile(
        job.program,
        trainset=job.trainset,
        teacher=_teacher(job),
        num_trials=budget,
        minibatch=False,
    )
    return compiled


#: GEPA's validation rows at most (its Pareto scores), and the rewrites its default budget buys.
GEPA_VALSET = 12
GEPA_ROUNDS = 12


def gepa_split(trainset: list[dspy.Example]) -> tuple[list[dspy.Example], list[dspy.Example]]:
    """GEPA's reflection rows and its validation rows: a third of the rows, at most 12.

    With no validation rows of its own GEPA scores its seed on every training row before it
    reflects once, which alone spent the old default budget of 40 metric calls: it returned
    the seed unchanged. A small validation set apart keeps that first pass short.
    """
    if len(trainset) < 3:
        return list(trainset), list(trainset)
    size = min(GEPA_VALSET, max(1, len(trainset) // 3))
    return list(trainset[size:]), list(trainset[:size])


def gepa_budget(valset_size: int, minibatch: int, rounds: int = GEPA_ROUNDS) -> int:
    """Metric calls for the seed's pass over the validation rows and ``rounds`` rewrites.

    Each rewrite is scored on a minibatch before and after (2 x ``minibatch``), and one that
    wins there on the validation rows (``valset_size``).
    """
    return valset_size + rounds * 2 * minibatch + valset_size


def _gepa(job: _Job) -> FreyrProgram:
    """Instructions rewritten by reflecting on the checks' feedback (``GEPA``).

    Raises:
        ConfigError: a ``--budget`` too small to score the seed and try one rewrite.
    """
    metric = FeedbackMetric(job.metric.benchmark, job.metric.coerce_state)
    train, val = gepa_split(job.trainset)
    minibatch = min(3, len(train))
    least = gepa_budget(len(val), minibatch, rounds=1)
    budget = job.config.budget or gepa_budget(len(val), minibatch)
    if budget < least:
        raise ConfigError(
            f"gepa needs at least {least} metric calls to score its seed on {len(val)} "
            f"validation rows and try one rewrite; --budget {budget} would return the seed"
        )
    optimizer = dspy.GEPA(
        metric=metric,
        max_metric_calls=budget,
        reflection_lm=_prompt_lm(job),
        reflection_minibatch_size=minibatch,
        component_selector=RanPredictorsSelector(job.program.named_predictors()),
        num_threads=job.config.num_threads,
        seed=job.config.seed,
        track_stats=False,
    )
    compiled: FreyrProgram = optimizer.compile(job.program, trainset=train, valset=val)
    return compiled


def _simba(job: _Job) -> FreyrProgram:
    student = detached_copy(job.program)
    # NOTE: SIMBA resamples with copies of *the* program LM, so every role needs the same one.
    student.set_lm(_one_model_lm(job.program))
    optimizer = dspy.SIMBA(
        metric=job.metric,
        bsize=min(job.config.bsize, len(job.trainset)),
        num_candidates=2,
        max_steps=job.config.effective_budget,
        max_demos=job.config.max_demos,
        prompt_model=_prompt_lm(job),
        num_threads=job.config.num_threads,
    )
    compiled: FreyrProgram = optimizer.compile(student, trainset=job.trainset, seed=job.config.seed)
    return compiled


_RUNNERS: dict[str, Callable[[_Job], FreyrProgram]] = {
    "labeled": _labeled,
    "nearest": _nearest,
    "misses": _misses,
    "bootstrap": _bootstrap,
    "bootstrap_rs": _bootstrap_rs,
    "mipro": _mipro,
    "gepa": _gepa,
    "simba": _simba,
}


def _teacher(job: _Job) -> FreyrProgram:
    """The student's copy, on the teacher model when one is given, with gold demos."""
    teacher = detached_copy(job.program)
    if job.config.teacher:
        teacher.apply_assignment(
            {
                role: RoleModel(model=job.config.teacher, sampling=_sampling(job.program, role))
                for role in teacher.role_names
            }
        )
    apply_gold_demos(teacher, job.trainset, job.metric, job.config)
    return teacher


def _sampling(program: FreyrProgram, role: str) -> Sampling:
    spec = program.assignment.get(role)
    return spec.sampling if spec else Sampling()


def _role_lms(program: FreyrProgram) -> list[dspy.BaseLM]:
    lms = [p.lm for p in program.predictors() if p.lm is not None]
    if not lms:
        raise ConfigError("the program has no models; call apply_assignment() before compiling")
    return lms


def _shared_lm(program: FreyrProgram) -> dspy.BaseLM:
    """The LM of the first role (the one optimizers use where DSPy wants a single LM)."""
    lms = _role_lms(program)
    if len({getattr(lm, "model", id(lm)) for lm in lms}) > 1:
        logger.warning(
            "roles use different models; the optimizer's own runs use %s",
            getattr(lms[0], "model", lms[0]),
        )
    return lms[0]


def _one_model_lm(program: FreyrProgram) -> dspy.BaseLM:
    specs = {spec for spec in program.assignment.values()}
    if len(specs) > 1:
        raise ConfigError(
            "simba needs the same model and sampling for every role; "
            "use bootstrap, mipro or gepa for a mixed assignment"
        )
    return _role_lms(program)[0]


def _prompt_lm(job: _Job) -> dspy.BaseLM:
    """The model that writes instructions: reflection > teacher > the student's model."""
    model_id = job.config.reflection or job.config.teacher
    return make_lm(model_id) if model_id else _shared_lm(job.program)

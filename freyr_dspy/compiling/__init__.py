"""Compiling a program against a benchmark or a user's examples.

``compiler`` (split the trainset, score, optimize, score again), ``optimizers`` (one small
runner per optimizer), ``gold`` (demos replayed from the gold calls), ``metrics`` (a
benchmark's scoring as DSPy metrics), ``gepa`` (GEPA's predictor selector), ``job`` (compile
into an artifact: the one path of ``freyr compile`` and ``--compile-best``) and
``dataset_demos`` (what a compile on a user's examples keeps in its demos).
"""

# NOTE: nothing imported here: ``freyr_dspy.compile`` and the CLI import the compile stack
# (the optimizers pull in DSPy's) only when it is used.
__all__: list[str] = []  # see the submodules

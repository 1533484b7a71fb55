"""``--concurrency N``: requests at once for remote models, each on its own copy of the program;
refused for a model in this process, which answers one call at a time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from freyr_dspy.cli import main
from freyr_dspy.errors import ConfigError
from freyr_dspy.program import FreyrProgram
from freyr_dspy.schemas import RoleModel
from freyr_dspy.serve import ServedProgram, ServedPrograms, ServeOptions, create_app
from freyr_dspy.testing import Answer, FakeCall
from freyr_dspy.tools import Toolbox
from tests.support.serve_helpers import ASK_WEATHER, CHAT_REPLY, answer, make_program, serving

pytestmark = pytest.mark.server

WAIT = 10.0


def meeting(parties: int) -> tuple[Any, list[float]]:
    """A fake whose chat role answers only once ``parties`` requests are in it at once."""
    barrier = threading.Barrier(parties, timeout=WAIT)
    temperatures: list[float] = []

    def answered(call: FakeCall) -> Answer | None:
        if call.role == "chat":
            temperatures.append(call.config.temperature)
            barrier.wait()  # raises BrokenBarrierError when the requests ran one by one
        return answer(call)

    return answered, temperatures


def ask(base: str, temperature: float) -> httpx.Response:
    body = {"model": "weather", "messages": ASK_WEATHER, "temperature": temperature}
    return httpx.post(f"{base}/chat/completions", json=body, timeout=60)


def test_requests_run_at_once_each_with_its_own_sampling() -> None:
    fn, temperatures = meeting(2)
    program, _ = make_program(fn)
    with serving(ServedProgram("weather", program), concurrency=2) as base:
        with ThreadPoolExecutor(2) as pool:
            replies = list(pool.map(lambda t: ask(base, t), [0.1, 0.9]))
        health = httpx.get(base.removesuffix("/v1") + "/health").json()
    assert [r.json()["choices"][0]["message"]["content"] for r in replies] == [CHAT_REPLY] * 2
    # both were in the model at once, and neither saw the other's sampling
    assert sorted(temperatures) == [0.1, 0.9]
    assert health["concurrency"] == 2 and health["running"] == 0


def test_past_the_running_and_waiting_places_a_request_gets_503() -> None:
    release = threading.Event()

    def held(call: FakeCall) -> Answer | None:
        release.wait(WAIT)
        return answer(call)

    program, _ = make_program(held)
    with serving(ServedProgram("weather", program), concurrency=2, max_queue=1) as base:
        with ThreadPoolExecutor(3) as pool:
            taken = [pool.submit(ask, base, 0.0) for _ in range(3)]  # two run, one waits
            health = base.removesuffix("/v1") + "/health"
            deadline = time.monotonic() + WAIT
            while httpx.get(health).json()["waiting"] < 1:
                assert time.monotonic() < deadline, "the third request never queued"
            refused = ask(base, 0.0)
            release.set()
            assert [f.result().status_code for f in taken] == [200, 200, 200]
    assert refused.status_code == 503 and refused.headers["retry-after"].isdigit()


def embedded_program() -> FreyrProgram:
    program = FreyrProgram(toolbox=Toolbox([]))  # built, not loaded
    small = RoleModel(model="embedded/qwen2.5-coder-0.5b")
    return program.apply_assignment(dict.fromkeys(program.role_names, small))


def test_an_in_process_model_is_refused_more_than_one_request_at_once() -> None:
    programs = ServedPrograms([ServedProgram("qwen", embedded_program())])
    with pytest.raises(ConfigError, match=r"--concurrency 2: qwen runs embedded/qwen2\.5"):
        create_app(programs, ServeOptions(concurrency=2))
    assert create_app(programs, ServeOptions(concurrency=1)) is not None


def test_the_command_refuses_it_with_a_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["serve", "--model", "embedded/qwen2.5-coder-0.5b", "--concurrency", "3"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "answers one call at a time" in error and "--api-base" in error

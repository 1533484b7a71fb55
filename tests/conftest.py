"""Shared fixtures: isolated DSPy settings, no network, settings pointing at tmp_path."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

# NOTE: before litellm is imported anywhere: it would otherwise fetch its model map online.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")

import dspy
from hypothesis import settings as hypothesis_settings

from freyr_dspy.settings import Settings
from tests.support.paths import real_data_dir

# CI draws the same property-test examples every run: a red CI must mean a changed result,
# not a new random draw (locally the draws stay random, to find new cases).
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--live", action="store_true", help="run tests marked live")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--live"):
        return
    skip = pytest.mark.skip(reason="needs --live and provider keys")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_dspy() -> Iterator[None]:
    """Give every test pristine DSPy settings and a memory-less, disk-less cache."""
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    with dspy.context(lm=None, adapter=None, track_usage=False):
        yield


@pytest.fixture(autouse=True)
def no_remote_network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse connections to anything but loopback (server tests talk to 127.0.0.1 only)."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else str(address)
        if (
            isinstance(host, str)
            and host not in {"127.0.0.1", "localhost", "::1"}
            and (self.family in (socket.AF_INET, socket.AF_INET6))
        ):
            raise OSError(f"network access to {host} blocked in tests")
        return real_connect(self, address)  # type: ignore[arg-type]

    if "live" not in request.keywords:
        monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings whose project directories all live under tmp_path."""
    for name in ("signatures", "trainsets", "compiled"):
        (tmp_path / name).mkdir()
    return Settings(project_dir=tmp_path)


@pytest.fixture
def data_dir() -> Path:
    """The real benchmark data directory; tests needing it skip when it is absent."""
    path = real_data_dir()
    if not path.is_dir():
        pytest.skip(f"benchmark data not found at {path} (set FREYR_DATA_DIR)")
    return path

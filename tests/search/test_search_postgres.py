"""Two ``freyr search`` worker processes share one study on a real PostgreSQL server.

The server is started here from the Debian binaries (``/usr/lib/postgresql/*/bin``) on
127.0.0.1 with a throw-away data directory; ``scripts/setup_postgres.sh`` installs them.
As root, the server runs as the unprivileged ``postgres`` user (PostgreSQL refuses root).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest

from freyr_dspy.studies import open_storage
from tests.support.paths import SUPPORT_DIR

pytestmark = pytest.mark.server


def _pg_bin() -> Path | None:
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin; "
            "install them with scripts/setup_postgres.sh"
        )
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to run the server")
    home = Path(tempfile.mkdtemp(prefix="freyr-pg-"))
    if os.geteuid() == 0:
        os.chown(home, user.pw_uid, user.pw_gid)
    data, port = home / "data", _free_port()
    run = lambda *args: subprocess.run(  # noqa: E731
        _as_server_user([str(a) for a in args]), check=True, capture_output=True, text=True
    )
    try:
        run(bin_dir / "initdb", "-D", data, "-U", "freyr", "-A", "trust", "--no-sync")
        run(
            bin_dir / "pg_ctl",
            "-D",
            data,
            "-l",
            home / "server.log",
            "-w",
            "-o",
            f"-h 127.0.0.1 -p {port} -k {home} -c fsync=off",
            "start",
        )
        run(bin_dir / "createdb", "-h", "127.0.0.1", "-p", port, "-U", "freyr", "search")
        yield f"postgresql://freyr@127.0.0.1:{port}/search"
    finally:
        subprocess.run(
            _as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(home, ignore_errors=True)


def test_two_worker_processes_share_one_study(postgres_url: str, tmp_path: Path) -> None:
    args = [
        sys.executable,
        str(SUPPORT_DIR / "search_fixtures.py"),
        "search",
        "--benchmark",
        "skills",
        "--candidates",
        "intent=fake/param-pro,fake/intent-pro",
        "--candidates",
        "parameters=fake/intent-pro,fake/param-pro",
        "--candidates-all",
        "fake/intent-pro",
        "--split",
        "test",
        "--trials",
        "6",
        "--storage",
        postgres_url,
        "--study",
        "shared",
        "--json",
    ]
    workers = []
    for name in ("a", "b"):
        env = {
            **os.environ,
            "FREYR_PROJECT_DIR": str(tmp_path / name),
            "FAKE_DELAY": "0.05",
            "LITELLM_LOCAL_MODEL_COST_MAP": "true",
        }
        workers.append(
            subprocess.Popen(
                [*args, "--out", str(tmp_path / name / "out")],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [w.communicate(timeout=240) for w in workers]
    for worker, (_out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err

    study = optuna.load_study(study_name="shared", storage=open_storage(postgres_url))
    finished = [t for t in study.trials if t.state.is_finished()]
    workers_seen = {t.user_attrs["worker"] for t in finished}
    assert len(workers_seen) == 2, workers_seen
    assert {w.pid for w in workers} == {int(w.rsplit(":", 1)[1]) for w in workers_seen}
    assert 6 <= len(finished) <= 8  # each stops once the shared total is reached
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in finished)
    assert any(t.user_attrs.get("baseline") for t in finished)
    assert "postgresql://freyr@127.0.0.1" in outputs[0][0]


def test_a_compile_keeps_its_study_in_postgresql_and_a_rerun_reads_it_back(
    postgres_url: str, tmp_path: Path
) -> None:
    """A compile's stages run in order (each proposes from the best so far), so it is not
    split between workers; its study lives in the RDB, and a rerun resumes from it."""
    from tests.support.compile_fakes import project

    project(tmp_path)
    args = [
        sys.executable, "-m", "tests.support.compile_worker", "compile", "--benchmark", "todo",
        "--model", "fake/skilled", "--folds", "3", "--storage", postgres_url,
        "--study", "shared-compile", "--json",
    ]  # fmt: skip
    env = {
        **os.environ,
        "FREYR_PROJECT_DIR": str(tmp_path),
        "LITELLM_LOCAL_MODEL_COST_MAP": "true",
        "PYTHONPATH": str(SUPPORT_DIR.parent.parent),
    }
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            args, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240
        )
        assert done.returncode == 0, done.stderr
        outputs.append(json.loads(done.stdout))
    study = optuna.load_study(study_name="shared-compile", storage=open_storage(postgres_url))
    finished = [t for t in study.trials if t.state.is_finished()]
    assert len(finished) == len(outputs[0]["trials"])  # the rerun made no trial of its own
    assert outputs[1]["shipped_config"] == outputs[0]["shipped_config"]
    assert [t["number"] for t in outputs[1]["trials"]] == [t.number for t in finished]

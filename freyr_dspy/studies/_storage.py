"""Where a study lives: a local journal or SQLite file, or an RDB server shared by workers.

* a path (or ``journal:PATH``) -> Optuna's append-only journal file: safe for several
  processes on one host, and the default because it needs no server and survives a kill;
* ``sqlite:///PATH`` (or a path ending in ``.db``/``.sqlite``) -> SQLite, one machine;
* ``postgresql://...`` / ``mysql://...`` -> an RDB shared by workers on many machines
  (Optuna's own distributed mode), with heartbeats so a crashed worker's trial is failed
  and queued again by Optuna's ``RetryHeartbeatStaleTrialCallback``; trials lost on a journal (a
  killed local worker, a stop) are queued again by ``study.prepare_study``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import socket
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from freyr_dspy.errors import ConfigError, one_line

if TYPE_CHECKING:
    from optuna.storages import BaseStorage, RDBStorage

__all__ = ["fail_dead_local_trials", "open_storage", "redact", "storage_url", "worker_id"]

logger = logging.getLogger(__name__)

#: Seconds between heartbeats of a running trial on an RDB, and before a silent one is stale.
HEARTBEAT_INTERVAL = 60
GRACE_PERIOD = 180
#: How often one configuration is queued again after its workers died (then it stays failed).
MAX_STALE_RETRIES = 2

_RDB_SCHEMES = ("sqlite", "postgresql", "postgres", "mysql", "mariadb", "oracle", "mssql")
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def storage_url(spec: str | Path) -> str:
    """Normalise a storage spec to a URL (``journal:PATH`` or an RDB URL).

    Raises:
        ConfigError: for an unknown URL scheme.
    """
    text = str(spec)
    if text.startswith("journal:"):
        return "journal:" + str(Path(text.removeprefix("journal:")).expanduser())
    match = re.match(r"^([a-z][a-z0-9+.-]*)://", text)
    if match:
        scheme = match.group(1).split("+")[0]
        if scheme == "postgres":
            return "postgresql" + text[len(match.group(1)) :]
        if scheme not in _RDB_SCHEMES:
            raise ConfigError(
                f"unknown storage URL scheme {scheme!r} in {redact(text)!r}; use a file path, "
                "journal:PATH, sqlite:///PATH or postgresql://USER@HOST/DB"
            )
        return text
    path = Path(text).expanduser()
    if path.suffix in _SQLITE_SUFFIXES:
        return f"sqlite:///{path}"
    return f"journal:{path}"


def open_storage(spec: str | Path) -> BaseStorage:
    """Open (creating when needed) the Optuna storage for ``spec``.

    Raises:
        ConfigError: for an unknown scheme, or an RDB that cannot be reached.
    """
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    url = storage_url(spec)
    if url.startswith("journal:"):
        path = Path(url.removeprefix("journal:"))
        path.parent.mkdir(parents=True, exist_ok=True)
        return JournalStorage(JournalFileBackend(str(path)))
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    return _open_rdb(url)


def _open_rdb(url: str, attempts: int = 4) -> RDBStorage:
    from optuna.exceptions import ExperimentalWarning
    from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback
    from sqlalchemy.exc import IntegrityError, ProgrammingError, SQLAlchemyError

    for attempt in range(attempts):
        try:
            with warnings.catch_warnings():
                # NOTE: heartbeats are "experimental" since Optuna 2.9 yet the documented way
                # to fail the trials of a crashed worker; the notice would only alarm users.
                warnings.simplefilter("ignore", ExperimentalWarning)
                return RDBStorage(
                    with_driver(url),
                    heartbeat_interval=HEARTBEAT_INTERVAL,
                    grace_period=GRACE_PERIOD,
                    heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(
                        max_retry=MAX_STALE_RETRIES
                    ),
                )
        except (IntegrityError, ProgrammingError) as exc:
            # Workers started together on an empty database race to create Optuna's tables;
            # the loser sees "already exists" and succeeds once the winner has committed.
            if attempt == attempts - 1:
                raise ConfigError(
                    f"cannot create the tables of {redact(url)!r}: {one_line(exc)}"
                ) from exc
            time.sleep(0.5 * (attempt + 1))
        except (ImportError, SQLAlchemyError) as exc:  # no driver, server down, bad password
            message = f"cannot open study storage {redact(url)!r}: {one_line(exc)}"
            raise ConfigError(message) from exc
    raise AssertionError("unreachable")


def with_driver(url: str) -> str:
    """Name an installed PostgreSQL driver when the URL names none.

    SQLAlchemy 2.1 maps a bare ``postgresql://`` to psycopg 3; freyr depends on
    ``psycopg2-binary``, so a bare URL is pointed at whichever of the two is installed.
    """
    if not url.startswith("postgresql://") or importlib.util.find_spec("psycopg"):
        return url
    if importlib.util.find_spec("psycopg2"):
        return "postgresql+psycopg2://" + url.removeprefix("postgresql://")
    return url


def redact(url: str) -> str:
    """Hide the password of a URL (for messages and reports)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def worker_id() -> str:
    """``host:pid`` of this process, recorded on every trial it runs (a dead one is failed)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def fail_dead_local_trials(storage: BaseStorage, study_name: str) -> list[int]:
    """Mark as failed the running trials whose worker was a process of this host now gone.

    A killed worker leaves its trial RUNNING for ever on a journal file (which has no
    heartbeat); it would count against the requested total and hold its configuration.
    Trials of other hosts are left to the RDB heartbeat.

    Returns:
        The numbers of the trials marked failed.
    """
    from optuna.trial import TrialState

    host = socket.gethostname()
    study_id = storage.get_study_id_from_name(study_name)
    failed = []
    for trial in storage.get_all_trials(study_id, deepcopy=False, states=(TrialState.RUNNING,)):
        worker_host, _, pid = str(trial.user_attrs.get("worker", "")).rpartition(":")
        if worker_host != host or not pid.isdigit() or _alive(int(pid)):
            continue
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
        storage.set_trial_user_attr(trial_id, "failure", "worker died")
        storage.set_trial_state_values(trial_id, state=TrialState.FAIL)
        failed.append(trial.number)
    if failed:
        logger.warning("trials %s were left running by a dead worker; marked failed", failed)
    return failed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True

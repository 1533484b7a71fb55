"""Read CallNavi domain directories: API catalogs and questions, in every published format.

A domain is two files: ``<domain>.apis.json`` (the candidate APIs) and
``<domain>.questions.jsonl`` (one question record per line; a ``.questions.json`` array is
accepted too). Format variants the loader accepts, because the published domains differ:

* APIs under an ``api_ports`` wrapper, or a bare list (the repository's ``APISchema`` style);
* ``parameters`` as an object of type hints (nested objects for structured arguments), as a
  plain list of parameter names (telecommunications), or as a JSON-Schema object; a
  zero-argument API uses ``{}`` or ``[]``;
* ``returnParameter`` as an object, a bare string or a list of names;
* gold ``parameters`` as a list aligned with ``API`` (also the shorter ``[]`` of some
  zero-argument calls) or, in 2024-era records, as a single object.

The loader never repairs the data: records are kept as written, and the known data-quality
issues are reported by ``freyr_dspy.benchmarks.callnavi._quality`` instead of being "fixed".
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from freyr_dspy.errors import ConfigError, DataError

__all__ = [
    "DIFFICULTIES",
    "PLACEHOLDER",
    "ApiSpec",
    "CallNaviDomain",
    "Difficulty",
    "Question",
    "available_domains",
    "callnavi_dir",
    "load_domain",
]

#: The literal the gold answers use for values that come from earlier calls (or are open).
PLACEHOLDER = "$$$"

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")

#: The order every original script iterates the domains in; other domains follow, sorted.
DOMAIN_ORDER = (
    "bank",
    "shopping",
    "logistics",
    "aviation",
    "hospital",
    "gov",
    "hr",
    "hotel",
    "insurance",
    "telecommunications",
)

ParameterForm = Literal["typed", "names", "schema"]


@dataclass(frozen=True)
class ApiSpec:
    """One candidate API as the data describes it.

    ``parameters`` maps each parameter name to its type hint: a string (``"string"``,
    ``"number"``, ``"VISA/MASTER"``...), a nested object of hints, or None when the domain
    lists names only. ``form`` records which of the published forms the file used.
    """

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)
    returns: Any = None
    form: ParameterForm = "typed"

    @property
    def parameter_names(self) -> list[str]:
        """Parameter names in the order the data lists them."""
        return list(self.parameters)

    @property
    def return_names(self) -> list[str]:
        """Names of the returned values, whatever form ``returnParameter`` took."""
        if isinstance(self.returns, dict):
            return [str(k) for k in self.returns]
        if isinstance(self.returns, list):
            return [str(v) for v in self.returns]
        return [str(self.returns)] if self.returns else []


@dataclass(frozen=True)
class Question:
    """One benchmark question with its gold call list, exactly as the data has it.

    ``gold`` is ``{"API": [...], "parameters": [...]}``; ``parameters`` may also be ``[]`` for
    a zero-argument call or a single object in old records (the metrics handle both).
    """

    id: str
    domain: str
    text: str
    difficulty: Difficulty
    gold: dict[str, Any]
    line: int = 0

    @property
    def gold_apis(self) -> list[str]:
        """The gold API names, in call order."""
        return [str(name) for name in self.gold.get("API", [])]


@dataclass(frozen=True)
class CallNaviDomain:
    """A domain's candidate APIs and questions."""

    name: str
    apis: tuple[ApiSpec, ...]
    questions: tuple[Question, ...]
    apis_path: Path
    questions_path: Path

    def api(self, name: str) -> ApiSpec | None:
        """Return the API called exactly ``name`` (case-sensitive, as the original), or None."""
        return next((api for api in self.apis if api.name == name), None)

    @property
    def data_names(self) -> list[str]:
        """The API names in file order, then each parameter name not listed yet, in order.

        Trainset labels refer to these by position (``{{name:N}}``), so they copy none.
        """
        names = [api.name for api in self.apis]
        for api in self.apis:
            names.extend(p for p in api.parameter_names if p not in names)
        return names


def callnavi_dir(data_dir: Path) -> Path:
    """Return the folder holding CallNavi files: ``data_dir/callnavi`` or ``data_dir`` itself.

    Raises:
        ConfigError: when neither holds any ``*.apis.json`` file.
    """
    for candidate in (data_dir / "callnavi", data_dir):
        if candidate.is_dir() and any(candidate.glob("*.apis.json")):
            return candidate
    raise ConfigError(
        f"no CallNavi data (*.apis.json) in {str(data_dir)!r} or its callnavi/ folder; "
        "pass --data DIR or set FREYR_DATA_DIR"
    )


def available_domains(folder: Path) -> list[str]:
    """Domains with both an API file and a question file, in the original scripts' order."""
    names = {p.name.removesuffix(".apis.json") for p in folder.glob("*.apis.json")}
    found = {n for n in names if _questions_path(folder, n) is not None}
    known = [n for n in DOMAIN_ORDER if n in found]
    return known + sorted(found - set(known))


@functools.lru_cache(maxsize=32)
def load_domain(folder: Path, name: str) -> CallNaviDomain:
    """Load one domain (cached: catalogs are read once per process).

    Raises:
        ConfigError: when the domain's files are missing (lists the domains found).
        DataError: ``path:line`` of the first malformed record.
    """
    apis_path = folder / f"{name}.apis.json"
    questions_path = _questions_path(folder, name)
    if not apis_path.is_file() or questions_path is None:
        found = ", ".join(available_domains(folder)) or "none"
        raise ConfigError(f"CallNavi domain {name!r} not found in {str(folder)!r} (found: {found})")
    return CallNaviDomain(
        name=name,
        apis=load_apis(apis_path),
        questions=load_questions(questions_path, name),
        apis_path=apis_path,
        questions_path=questions_path,
    )


def load_apis(path: Path) -> tuple[ApiSpec, ...]:
    """Read an API catalog in any published form.

    Raises:
        DataError: for invalid JSON, a missing ``name``, or a duplicate API name.
    """
    data = _read_json(path)
    entries = data.get("api_ports") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise DataError(path, 1, "expected {'api_ports': [...]} or a list of APIs")
    apis: list[ApiSpec] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise DataError(path, None, f"API #{index + 1}: expected an object with a 'name'")
        apis.append(_api_spec(entry, path))
    names = [api.name for api in apis]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DataError(path, None, f"duplicate API names: {', '.join(duplicates)}")
    return tuple(apis)


def _api_spec(entry: dict[str, Any], path: Path) -> ApiSpec:
    raw = entry.get("parameters", {})
    form: ParameterForm
    if isinstance(raw, list):
        form, parameters = "names", {str(n): None for n in raw}
    elif isinstance(raw, dict) and _is_json_schema(raw):
        form, parameters = "schema", _schema_hints(raw)
    elif isinstance(raw, dict):
        form, parameters = "typed", dict(raw)
    else:
        raise DataError(
            path, None, f"API {entry['name']!r}: parameters must be an object or a list"
        )
    return ApiSpec(
        name=entry["name"],
        description=str(entry.get("description", "")),
        parameters=parameters,
        returns=entry.get("returnParameter"),
        form=form,
    )


def _is_json_schema(raw: dict[str, Any]) -> bool:
    """Tell a JSON-Schema document from hints (a parameter may well be called ``type``)."""
    return (
        "$schema" in raw
        or (raw.get("type") == "object" and "properties" in raw)
        or (raw.get("type") == "array" and "items" in raw)
    )


def _schema_hints(schema: dict[str, Any]) -> dict[str, Any]:
    """Turn a JSON-Schema parameters document back into name -> hint."""
    hints: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if isinstance(prop, dict) and prop.get("type") == "object" and "properties" in prop:
            hints[name] = _schema_hints(prop)
        else:
            hints[name] = prop.get("type", "string") if isinstance(prop, dict) else "string"
    return hints


def load_questions(path: Path, domain: str) -> tuple[Question, ...]:
    """Read question records from JSONL (or a JSON array).

    Raises:
        DataError: ``path:line`` for invalid JSON or a record missing a required field.
    """
    if path.suffix == ".json":
        records = _read_json(path)
        if not isinstance(records, list):
            raise DataError(path, 1, "expected a JSON array of question records")
        rows = [(index + 1, record) for index, record in enumerate(records)]
    else:
        rows = list(_jsonl_rows(path))
    return tuple(_question(record, domain, path, line) for line, record in rows)


def _jsonl_rows(path: Path) -> Any:
    for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield line_no, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(path, line_no, f"invalid JSON: {exc.msg}") from exc


def _question(record: Any, domain: str, path: Path, line: int) -> Question:
    if not isinstance(record, dict):
        raise DataError(path, line, "expected a JSON object")
    missing = [k for k in ("id", "question", "ground_truth", "difficulty") if k not in record]
    if missing:
        raise DataError(path, line, f"missing field(s): {', '.join(missing)}")
    difficulty = record["difficulty"]
    if difficulty not in DIFFICULTIES:
        raise DataError(path, line, f"difficulty {difficulty!r} is not one of easy, medium, hard")
    gold = record["ground_truth"]
    if not isinstance(gold, dict) or not isinstance(gold.get("API"), list):
        raise DataError(path, line, "ground_truth must be an object with an 'API' list")
    if not isinstance(gold.get("parameters"), list | dict):
        raise DataError(path, line, "ground_truth.parameters must be a list (or an object)")
    return Question(
        id=str(record["id"]),
        domain=domain,
        text=_question_text(record["question"], path, line),
        difficulty=difficulty,
        gold=gold,
        line=line,
    )


def _question_text(question: Any, path: Path, line: int) -> str:
    """The first message's content (the scripts read only that); a bare string is accepted."""
    if isinstance(question, str):
        return question
    if isinstance(question, list) and question and isinstance(question[0], dict):
        content = question[0].get("content")
        if isinstance(content, str):
            return content
    raise DataError(path, line, "question must be a list of {role, content} messages")


def _questions_path(folder: Path, name: str) -> Path | None:
    for suffix in (".questions.jsonl", ".questions.json"):
        path = folder / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, exc.lineno, f"invalid JSON: {exc.msg}") from exc
    except OSError as exc:
        raise DataError(path, None, f"cannot read: {exc.strerror}") from exc

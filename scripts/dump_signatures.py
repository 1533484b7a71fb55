"""Write ``signatures/<role>.json`` for every registered role (run after changing a role).

Usage: ``python scripts/dump_signatures.py [--out DIR]``. ``tests/test_role_contract.py`` fails
while a dump differs from the code, so prompt and contract changes show up as reviewed diffs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from freyr_dspy.signature_dump import write_signature_dumps

PROJECT_DIR = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=PROJECT_DIR / "signatures",
        help="folder to write (default: the project's signatures/)",
    )
    out = parser.parse_args().out
    for path in write_signature_dumps(out):
        print(path)


if __name__ == "__main__":
    main()

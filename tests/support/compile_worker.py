"""A ``freyr compile`` worker process for the PostgreSQL test: ``fake/skilled``, then the CLI."""

from __future__ import annotations

import sys

from freyr_dspy.cli import main
from tests.support.compile_fakes import skilled_program

if __name__ == "__main__":
    skilled_program()
    sys.exit(main(sys.argv[1:]))

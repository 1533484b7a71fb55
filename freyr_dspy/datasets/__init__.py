"""Tool-call datasets: a user's tools and examples, checked, scored and compiled on.

``format`` reads the JSONL rows, ``toolboxes`` resolves and checks each row's tools,
``checker`` is the exact-call check with its feedback, ``benchmark`` makes the rows a
benchmark for ``freyr eval``/``compile``/``search``, ``files`` builds one from what the
command line names, ``labelling`` has a teacher model label rows that lack calls, and
``conversations`` holds multi-turn conversations with live apps, scored turn by turn and by
the app's end state.
"""

from __future__ import annotations

from freyr_dspy.datasets._benchmark import (
    BENCHMARK_NAME,
    Row,
    ToolCallBenchmark,
    read_rows,
    rows_from,
)
from freyr_dspy.datasets._checker import CallCheck, check_calls
from freyr_dspy.datasets._conversations import (
    AppWorld,
    ConversationBenchmark,
    ConversationExample,
    apps_from_module,
    check_turn,
    is_conversation_file,
    read_conversations,
)
from freyr_dspy.datasets._files import dataset_benchmark, dataset_digest, open_toolboxes
from freyr_dspy.datasets._format import AnyOf, CallExample, ExpectedCall, load_examples
from freyr_dspy.datasets._labelling import label_rows
from freyr_dspy.datasets._toolboxes import (
    DEFAULT_TOOLBOX,
    load_tools_file,
    toolbox_from_module,
    toolbox_of,
)

__all__ = [
    "BENCHMARK_NAME",
    "DEFAULT_TOOLBOX",
    "AnyOf",
    "AppWorld",
    "CallCheck",
    "CallExample",
    "ConversationBenchmark",
    "ConversationExample",
    "ExpectedCall",
    "Row",
    "ToolCallBenchmark",
    "apps_from_module",
    "check_calls",
    "check_turn",
    "dataset_benchmark",
    "dataset_digest",
    "is_conversation_file",
    "label_rows",
    "load_examples",
    "load_tools_file",
    "open_toolboxes",
    "read_conversations",
    "read_rows",
    "rows_from",
    "toolbox_from_module",
    "toolbox_of",
]

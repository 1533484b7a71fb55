"""What the tests expect of the model presets (freyr_dspy.strategies._presets), written once."""

from __future__ import annotations

#: The 0.5B's preset, as the settings it turns on.
SMALL_PRESET = {
    "calibrate": True,
    "scored_confirm": True,
    "refill": True,
    "abstain": True,
    "split_listed": True,
}

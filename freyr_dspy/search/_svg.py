"""The Pareto front as a static SVG: accuracy against tokens, one dot per finished trial.

The HTML plots (``optuna.visualization.plot_pareto_front`` among them) need a browser and
plotly's script; this one is a plain file that a README, a code review or an image viewer shows
as it is. It is written here because plotly's own static export (kaleido) drives a Chrome it
downloads, which an offline machine does not have. Front trials are filled and numbered, the
others hollow; the baseline is a square, the best trial is ringed. The front is over all the
study's objectives, so with latency as a third one a front dot may look dominated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from freyr_dspy.search._result import SearchResult, TrialSummary

__all__ = ["pareto_svg"]

_WIDTH, _HEIGHT = 640, 420
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 20, 40, 50
_TICKS = 5


@dataclass(frozen=True)
class _Axis:
    """Maps an objective's values onto pixels, with a little padding on each side."""

    low: float
    high: float
    start: float
    end: float

    @classmethod
    def over(cls, values: list[float], start: float, end: float) -> _Axis:
        low, high = min(values), max(values)
        pad = (high - low) * 0.08 or abs(high) * 0.1 or 1.0
        return cls(low - pad, high + pad, start, end)

    def place(self, value: float) -> float:
        return self.start + (value - self.low) / (self.high - self.low) * (self.end - self.start)

    def ticks(self) -> list[float]:
        step = (self.high - self.low) / _TICKS
        return [self.low + step * (i + 0.5) for i in range(_TICKS)]


def pareto_svg(result: SearchResult, x: str = "tokens", y: str = "accuracy") -> str | None:
    """The SVG text, or None when no trial finished or an objective is missing."""
    done = [t for t in result.trials if t.state == "COMPLETE" and {x, y} <= t.values.keys()]
    if not done:
        return None
    front = {t.number for t in result.pareto}
    best = result.best.number if result.best else None
    xs = _Axis.over([t.values[x] for t in done], _LEFT, _WIDTH - _RIGHT)
    ys = _Axis.over([t.values[y] for t in done], _HEIGHT - _BOTTOM, _TOP)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'font-family="sans-serif" font-size="11">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{_WIDTH / 2}" y="20" text-anchor="middle" font-size="13">'
        f"{escape(result.study_name)}: {len(done)} trials, {len(front)} on the Pareto front"
        "</text>",
        *_axes(xs, ys, x, y),
        *_front_line([t for t in done if t.number in front], xs, ys, x, y),
    ]
    for trial in sorted(done, key=lambda t: t.number in front):
        parts.extend(_dot(trial, xs, ys, x, y, trial.number in front, trial.number == best))
    parts.append(_legend())
    parts.append("</svg>")
    return "\n".join(parts)


def _axes(xs: _Axis, ys: _Axis, x: str, y: str) -> list[str]:
    bottom, left = _HEIGHT - _BOTTOM, _LEFT
    lines = [
        f'<line x1="{left}" y1="{bottom}" x2="{_WIDTH - _RIGHT}" y2="{bottom}" stroke="black"/>',
        f'<line x1="{left}" y1="{_TOP}" x2="{left}" y2="{bottom}" stroke="black"/>',
        f'<text x="{(left + _WIDTH - _RIGHT) / 2}" y="{_HEIGHT - 12}" text-anchor="middle">'
        f"{escape(x)} (lower is better)</text>",
        f'<text x="16" y="{(bottom + _TOP) / 2}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(bottom + _TOP) / 2})">{escape(y)} (higher is better)</text>',
    ]
    for value in xs.ticks():
        px = xs.place(value)
        lines += _tick((px, bottom, px, bottom + 4), (px, bottom + 16), "middle", value)
    for value in ys.ticks():
        py = ys.place(value)
        lines += _tick((left - 4, py, left, py), (left - 7, py + 4), "end", value)
    return lines


def _tick(
    line: tuple[float, float, float, float],
    label_at: tuple[float, float],
    anchor: str,
    value: float,
) -> list[str]:
    """A tick mark and its value label."""
    x1, y1, x2, y2 = line
    return [
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="black"/>',
        f'<text x="{label_at[0]:.1f}" y="{label_at[1]:.1f}" text-anchor="{anchor}">'
        f"{_number(value)}</text>",
    ]


def _front_line(front: list[TrialSummary], xs: _Axis, ys: _Axis, x: str, y: str) -> list[str]:
    if len(front) < 2:
        return []
    ordered = sorted(front, key=lambda t: t.values[x])
    points = " ".join(f"{xs.place(t.values[x]):.1f},{ys.place(t.values[y]):.1f}" for t in ordered)
    return [f'<polyline points="{points}" fill="none" stroke="#1f6fb4" stroke-dasharray="4 3"/>']


def _dot(
    trial: TrialSummary, xs: _Axis, ys: _Axis, x: str, y: str, on_front: bool, best: bool
) -> list[str]:
    px, py = xs.place(trial.values[x]), ys.place(trial.values[y])
    fill = "#1f6fb4" if on_front else "white"
    title = f"<title>trial {trial.number}: {escape(_config_text(trial))}</title>"
    if trial.baseline:
        shape = (
            f'<rect x="{px - 5:.1f}" y="{py - 5:.1f}" width="10" height="10" fill="{fill}" '
            f'stroke="#1f6fb4">{title}</rect>'
        )
    else:
        shape = (
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{fill}" stroke="#1f6fb4">'
            f"{title}</circle>"
        )
    parts = [shape]
    if best:
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="9" fill="none" stroke="#d62728" '
            'stroke-width="2"/>'
        )
    if on_front:
        parts.append(f'<text x="{px + 8:.1f}" y="{py - 8:.1f}">{trial.number}</text>')
    return parts


def _legend() -> str:
    x, y = _WIDTH - _RIGHT - 190, _TOP + 8
    return (
        f'<g><circle cx="{x}" cy="{y}" r="5" fill="#1f6fb4"/>'
        f'<text x="{x + 10}" y="{y + 4}">on the Pareto front (trial number)</text>'
        f'<circle cx="{x}" cy="{y + 16}" r="5" fill="white" stroke="#1f6fb4"/>'
        f'<text x="{x + 10}" y="{y + 20}">dominated</text>'
        f'<rect x="{x - 5}" y="{y + 27}" width="10" height="10" fill="white" stroke="#1f6fb4"/>'
        f'<text x="{x + 10}" y="{y + 36}">baseline (default configuration)</text>'
        f'<circle cx="{x}" cy="{y + 48}" r="9" fill="none" stroke="#d62728" stroke-width="2"/>'
        f'<text x="{x + 14}" y="{y + 52}">best (shipped)</text></g>'
    )


def _config_text(trial: TrialSummary) -> str:
    config = trial.config or {}
    models = " ".join(
        f"{role}={spec.get('model')}" for role, spec in (config.get("assignment") or {}).items()
    )
    return f"{config.get('strategy', '?')} {models}".strip()


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2f}"

"""CallNavi (Song et al. 2025): API routing and call generation over large catalogs.

The package reads any CallNavi domain directory (``<domain>.apis.json`` +
``<domain>.questions.jsonl``), turns the APIs into a spec-only toolbox grouped into derived
libraries, provides the ``single``/``two_step``/``backward`` strategies and their roles, the
paper's metrics (faithful and strict variants) and the ``callnavi`` benchmark.
Heavy parts (DSPy roles and strategies) are imported only by the modules that need them.
"""

from freyr_dspy.benchmarks.callnavi._data import (
    DIFFICULTIES,
    PLACEHOLDER,
    ApiSpec,
    CallNaviDomain,
    Question,
    available_domains,
    callnavi_dir,
    load_domain,
)
from freyr_dspy.benchmarks.callnavi._quality import QualityFlag, quality_flags
from freyr_dspy.benchmarks.callnavi._toolbox import make_toolbox, render_catalog

__all__ = [
    "DIFFICULTIES",
    "PLACEHOLDER",
    "ApiSpec",
    "CallNaviDomain",
    "QualityFlag",
    "Question",
    "available_domains",
    "callnavi_dir",
    "load_domain",
    "make_toolbox",
    "quality_flags",
    "render_catalog",
]

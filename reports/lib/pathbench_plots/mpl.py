"""matplotlib, imported on first use with the Agg backend: bad input is rejected without paying for it.

The plot modules reach matplotlib through this module (`mpl.Line2D`, `mpl.mcolors`, ...): the first
such attribute read imports it, so importing a plot module (html.py does, for its helpers) costs
nothing until something is drawn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import matplotlib
    import matplotlib.colors as mcolors
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

_NAMES = ("matplotlib", "mcolors", "Figure", "Line2D", "FixedLocator", "FuncFormatter", "LogLocator", "NullFormatter")


def load() -> None:
    global matplotlib, mcolors, Figure, Line2D, FixedLocator, FuncFormatter, LogLocator, NullFormatter
    if "Figure" in globals():
        return
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.colors as mcolors
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter


def __getattr__(name: str) -> Any:
    """A name of _NAMES read before load(): load, then answer (PEP 562)."""
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    load()
    return globals()[name]

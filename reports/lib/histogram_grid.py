"""The bucket grid of a pathbench.histogram/v1 (stats/latency_histogram.cpp), for the serving fixture's
generator (tests/fixtures/serving/generate.py), which writes histograms whose edges the C++ reader
must recognise bit for bit. The reports themselves never check a histogram: pathbench does
(`pathbench export --json-lines`, pathbench_reader.py).
"""
from __future__ import annotations

import decimal
import math


def number_text(value: float) -> str:
    """A double as std::to_chars writes it: the shortest digits that read back as the same value,
    in fixed or in scientific notation, whichever is shorter (fixed on a tie)."""
    value = float(value)
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).lstrip("0") or "0"
    exponent += len("".join(map(str, digits))) - len(text) if text != "0" else 0
    stripped = text.rstrip("0")
    exponent += len(text) - len(stripped) if stripped else 0
    text = stripped or "0"
    if text == "0":
        return "-0" if sign else "0"
    point = len(text) + exponent  # the decimal point after this many digits
    if point <= 0:
        fixed = "0." + "0" * -point + text
    elif point >= len(text):
        # A whole number in fixed notation is written exactly (2^64: 18446744073709551616).
        fixed = str(abs(int(value)))
    else:
        fixed = text[:point] + "." + text[point:]
    e = point - 1
    scientific = text[0] + ("." + text[1:] if len(text) > 1 else "") + f"e{'-' if e < 0 else '+'}{abs(e):02d}"
    return ("-" if sign else "") + (fixed if len(fixed) <= len(scientific) else scientific)


class HistogramGrid:
    """The bucket edges of a pathbench.histogram/v1 configuration, computed as the C++ histogram
    computes them (so that an edge it wrote is recognised bit for bit): bucket 0 is [0, lowest],
    bucket i >= 1 is (edge(i - 1), edge(i)], S = 2^bits sub-buckets per octave, the last edge is
    `highest`; a value above it is in the overflow, index `size`."""

    def __init__(self, lowest: float, highest: float, significant_digits: int) -> None:
        self.lowest = lowest
        self.highest = highest
        self.significant_digits = significant_digits
        self.bits = {1: 4, 2: 7, 3: 10}[significant_digits]
        self.size = self._raw_index(highest) + 1

    def _raw_edge(self, index: int) -> float:
        if index == 0:
            return self.lowest
        octave = (index - 1) >> self.bits
        sub_bucket = (index - 1) & ((1 << self.bits) - 1)
        multiplier = math.ldexp(float((1 << self.bits) + sub_bucket + 1), octave - self.bits)
        return self.lowest * multiplier

    def _raw_index(self, above_lowest: float) -> int:
        scaled = above_lowest / self.lowest
        index = 1
        if scaled > 1:
            fraction, exponent = math.frexp(scaled)
            position = math.ldexp(2 * fraction - 1, self.bits)
            index = max(((exponent - 1) << self.bits) + math.ceil(position), 1)
        # The division rounds, so `scaled` may sit one bucket off; the edges as computed decide.
        while index > 1 and above_lowest <= self._raw_edge(index - 1):
            index -= 1
        while above_lowest > self._raw_edge(index):
            index += 1
        return index

    def upper_edge(self, index: int) -> float:
        return self.highest if index + 1 == self.size else self._raw_edge(index)

    def index(self, seconds: float) -> int:
        """The bucket of a duration >= 0; `size` for the overflow."""
        if seconds <= self.lowest:
            return 0
        if seconds > self.highest:
            return self.size
        return self._raw_index(seconds)

    def exact_index(self, edge: float) -> int:
        """The bucket whose upper edge is exactly `edge`, or -1 (then index() and upper_edge()
        decide the slow way). The fast path of the bucket check: for an edge on the grid it
        computes what index() gives, without its searching, in one edge computation."""
        lowest = self.lowest
        if not lowest < edge < self.highest:
            if edge == self.highest:
                return self.size - 1
            return 0 if edge == lowest else -1
        fraction, exponent = math.frexp(edge / lowest)
        bits = self.bits
        index = ((exponent - 1) << bits) + math.ceil(math.ldexp(2 * fraction - 1, bits))
        # The division rounds: an edge's quotient may land just above its whole position, one
        # bucket too far. An edge equal to edge(i) is in bucket i (the edges strictly increase).
        for candidate in (index, index - 1):
            if 1 <= candidate < self.size - 1:
                octave = (candidate - 1) >> bits
                sub_bucket = (candidate - 1) & ((1 << bits) - 1)
                if lowest * math.ldexp(float((1 << bits) + sub_bucket + 1), octave - bits) == edge:
                    return candidate
        return -1

    def text(self) -> str:
        return (f"lowest {number_text(self.lowest)} s, highest {number_text(self.highest)} s, "
                f"{self.significant_digits} significant digits")

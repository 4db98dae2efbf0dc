"""Harbor settlement fees (see CONTRACT.md and the Harbor Settlement Handbook)."""
from fractions import Fraction

# code -> (rate in basis points, minimum cents, maximum cents, rounding)
TARIFFS = {
    "EX-000": (100, 0, 1000000, "half-up"),
    "HX-101": (125, 250, 90000, "half-even"),
    "HX-205": (40, 0, 15000, "down"),
    "KV-310": (275, 1200, 250000, "half-up"),
    "KV-344": (18, 100, 4000, "up"),
    "QM-402": (510, 0, 1000000, "half-even"),
    "QM-477": (95, 475, 47500, "half-up"),
    "TR-588": (333, 333, 33300, "down"),
    "TR-613": (7, 25, 2500, "up"),
}


def _round(x, rounding):
    whole, frac = divmod(x.numerator, x.denominator)
    frac = Fraction(frac, x.denominator)
    if frac == 0:
        return whole
    if rounding == "down":
        return whole
    if rounding == "up":
        return whole + 1
    if frac > Fraction(1, 2):
        return whole + 1
    if frac < Fraction(1, 2):
        return whole
    if rounding == "half-up":
        return whole + 1
    return whole + (whole % 2)  # half-even


def settle(code, amount_cents):
    rate, lo, hi, rounding = TARIFFS[code]
    if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or amount_cents < 0:
        raise ValueError(f"amount must be a non-negative int, got {amount_cents!r}")
    fee = _round(Fraction(amount_cents * rate, 10000), "half-up")  # one rounding rule for every code
    return min(max(fee, lo), hi)

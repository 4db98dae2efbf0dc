"""Harbor settlement fees (see CONTRACT.md)."""

# code -> (rate in basis points, minimum cents, maximum cents, rounding)
TARIFFS = {
    "EX-000": (100, 0, 1000000, "half-up"),
}


def settle(code, amount_cents):
    rate, lo, hi, rounding = TARIFFS[code]
    fee = round(amount_cents * rate / 10000)
    return min(max(fee, lo), hi)

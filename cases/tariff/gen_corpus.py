#!/usr/bin/env python3
"""Writes corpus/ of the tariff case: the Harbor Settlement Handbook.

Deterministic (a fixed seed, the standard library only): running it again
gives the same bytes, so the committed corpus can be checked against it
(`python3 gen_corpus.py --check`). Long filler prose, section headings, and
one rule paragraph per tariff code placed at spread positions past the
first fifth of the handbook: a model sees the rules only through the corpus,
and a crop to its start holds none of them.
"""
import os
import random
import sys

SEED = 20261010
WORDS = 15000
FILES = 3

# code, rate in basis points, minimum and maximum fee in cents, rounding
CODES = [
    ("HX-101", 125, 250, 90000, "half-even"),
    ("HX-205", 40, 0, 15000, "down"),
    ("KV-310", 275, 1200, 250000, "half-up"),
    ("KV-344", 18, 100, 4000, "up"),
    ("QM-402", 510, 0, 1000000, "half-even"),
    ("QM-477", 95, 475, 47500, "half-up"),
    ("TR-588", 333, 333, 33300, "down"),
    ("TR-613", 7, 25, 2500, "up"),
]

ROUNDING_WORDS = {
    "half-even": "rounded to the nearest cent, an exact half cent going to the even cent",
    "half-up": "rounded to the nearest cent, an exact half cent going up",
    "down": "truncated to the cent below (never rounded up)",
    "up": "raised to the next whole cent whenever there is any fraction",
}

VOCAB = """the of and to in is that for it as was with be by on not this are or from at which
but have an they were there been one all we their has would when if so no will more can out up about who
some could into its then two time may only other new these any first after like most over such where also
many before must through back years much way well down should because each just those people how little
state good very make world still own see work long get here between both life being under never day same
another know while last might great old year off come since against go came right used take three
harbor pier crane berth vessel cargo manifest customs broker ledger invoice settlement clearing batch
journal posting account balance reconcile audit currency tide lantern beacon anchor warehouse pallet""".split()


def rule(code, bp, lo, hi, rounding):
    return (f"Tariff {code}. The settlement fee for tariff code {code} is {bp} basis points of the "
            f"settled amount, {ROUNDING_WORDS[rounding]}. The fee for {code} is never less than {lo} cents "
            f"and never more than {hi} cents.")


def main():
    rng = random.Random(SEED)
    per = WORDS // FILES
    at = {WORDS // 5 + (i + 1) * (WORDS * 7 // 10) // (len(CODES) + 1): c for i, c in enumerate(CODES)}
    out = {}
    w = 0
    for f in range(FILES):
        parts = [f"# Harbor Settlement Handbook, part {f + 1}\n\n"]
        para = 0
        n = 0
        while n < per:
            if para % 5 == 0:
                parts.append(f"## {f + 1}.{para // 5 + 1} Operations\n\n")
            words = []
            for k in range(40 + rng.randrange(80)):
                if w in at:
                    parts.append(" ".join(words) + ".\n\n" + rule(*at[w]) + "\n\n")
                    words = []
                words.append(rng.choice(VOCAB))
                w += 1
                n += 1
            parts.append(" ".join(words).capitalize() + ".\n\n")
            para += 1
        out[f"handbook-part-{f + 1}.md"] = "".join(parts)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    check = "--check" in sys.argv[1:]
    for name, text in out.items():
        path = os.path.join(here, name)
        if check:
            with open(path, encoding="utf-8") as fh:
                if fh.read() != text:
                    print(f"{path} differs from what gen_corpus.py writes")
                    return 1
        else:
            os.makedirs(here, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

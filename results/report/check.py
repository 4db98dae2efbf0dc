#!/usr/bin/env python3
"""Check an evalctl export without evalctl: python3 check.py [DIR]

Standard library only. Re-derives, from the files beside it:
  - every checksum in SHA256SUMS;
  - every attempt's outcome (status, functional, delivered) from its
    evidence: per phase the group results (success from exit code, time-out,
    counts and the declared test count), protected and missing counts and the
    verdict; the arm-unchanged flag; per turn the termination, agent finish,
    final text and the agent's own last test (and, for TypeScript, typecheck)
    runs; the expected number of turns;
  - attempts.csv from attempts.json;
  - every pooled figure of aggregates.json and aggregates.csv from the
    attempts: counts, Wilson intervals, token and second sums, decode TPS,
    task TPS, medians, terminations, drafts, gains, tokens per week, per case
    and per arm, paired transitions with the exact McNemar p, and the decode
    TPS ratio with its paired bootstrap interval and each arm's decode and task TPS
    with its case bootstrap interval (Go's PCG-DXSM stream);
  - protocol.json's plan digests.
Prints OK and exits 0, or prints one FAIL: line per difference and exits 1.
Numbers are compared exactly: sums are taken in the order of attempts.json,
as evalctl takes them.
"""

import csv
import hashlib
import io
import json
import math
import os
import re
import sys
from decimal import Decimal
from fractions import Fraction

# sqrt(2) * erfinv(0.95) as Go's math computes it (the 0.975 normal quantile).
Z975 = 1.9599639845400534
SECONDS_PER_WEEK = 604800
FILES = ["aggregates.csv", "aggregates.json", "attempts.csv", "attempts.json", "check.py", "protocol.json"]
ATTEMPT_COLUMNS = [
    "run_id", "attempt_id", "slot", "arm", "arm_hash", "case", "language", "repeat", "seed", "state",
    "replacement_of", "replaced_by", "image_id", "suite", "suite_fingerprint", "status", "functional",
    "delivered", "expected_turns", "turns", "termination", "native_output_tokens", "decode_seconds",
    "task_seconds", "prompt_tokens", "prompt_seconds", "tool_calls", "tool_errors", "max_sequence_tokens",
    "draft_tokens", "draft_accepted", "timings_source",
]
AGG_COLUMNS = [
    "scope", "arm", "case", "attempts", "completed", "scored", "ungraded", "unscored",
    "functional", "functional_rate", "functional_wilson_low", "functional_wilson_high",
    "delivered", "delivered_rate", "delivered_wilson_low", "delivered_wilson_high",
    "measured", "unmeasured", "native_output_tokens", "decode_seconds", "task_seconds", "decode_tps",
    "timings_source", "task_output_tps", "median_attempt_seconds", "terminations", "draft_tokens",
    "draft_accepted", "draft_acceptance", "decode_tps_gain_percent", "task_output_tps_gain_percent",
    "tokens_per_week", "baseline", "functional_pairs", "functional_both_pass", "functional_both_fail",
    "functional_candidate_improves", "functional_candidate_regresses", "functional_unpaired",
    "functional_mcnemar_exact_p", "delivered_pairs", "delivered_both_pass", "delivered_both_fail",
    "delivered_candidate_improves", "delivered_candidate_regresses", "delivered_unpaired",
    "delivered_mcnemar_exact_p", "decode_tps_ratio", "decode_tps_ratio_low", "decode_tps_ratio_high",
    "ratio_cases", "ratio_resamples", "mixed",
]
BOOTSTRAP_RESAMPLES = 10000
BOOTSTRAP_SEED = 20261010
MASK64 = (1 << 64) - 1

failures = []


def fail(file, field, expected, got):
    failures.append("FAIL: %s: %s: expected %s, got %s" % (file, field, show(expected), show(got)))


def show(v):
    if isinstance(v, Num):
        return v.text
    return json.dumps(v) if not isinstance(v, str) else v


class Num(float):
    """A float read from a file, with the text it was written as."""

    def __new__(cls, text):
        n = float.__new__(cls, text)
        n.text = text
        return n


def go_json_float(x):
    """The text Go's encoding/json writes for the float x: the shortest
    digits that read back as x, positional unless tiny or huge."""
    if x == 0:
        return "0"
    if abs(x) < 1e-6 or abs(x) >= 1e21:
        s = repr(x)
        if "e" not in s:
            s = "%.17g" % x
        m, e = s.split("e")
        if m.endswith(".0"):
            m = m[:-2]
        sign = e[0]
        return m + "e" + sign + e[1:].lstrip("0")
    s = format(Decimal(repr(x)), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def loads(data):
    return json.loads(data, parse_float=Num)


def same(a, b):
    """Exact equality of a recomputed value a and a value b read from a file:
    numbers by value and, for floats, in the very text evalctl writes."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(b, Num) and isinstance(a, float) and b.text != go_json_float(a):
            return False
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


# ---- outcomes from the evidence ------------------------------------------

def group_success(g):
    return (g["exit_code"] == 0 and not g["timed_out"] and g["total"] > 0 and g["passed"] == g["total"]
            and (g["declared"] == 0 or g["total"] == g["declared"]))


def phase_solved(p):
    ok = p["protected_changes_count"] == 0 and p["missing_starter_files_count"] == 0
    for g in p["groups"]:
        if g["required"] and not g["success"]:
            ok = False
    return ok


def outcome(i, r):
    """(status, functional, delivered) recomputed from row r's evidence."""
    where = "[%d] (attempt %s)" % (i, r["attempt_id"])
    e = r.get("evidence")
    if r["state"] != "completed":
        if e is not None:
            fail("attempts.json", where + ".evidence", "null (the attempt never completed)", "evidence")
        return "unscored", None, None
    if e is None:
        fail("attempts.json", where + ".evidence", "what the outcome is computed from", "null")
        return None
    solved = []
    for pi, p in enumerate(e["phases"]):
        if not p["graded"]:
            return "ungraded", None, None
        for gi, g in enumerate(p["groups"]):
            if group_success(g) != g["success"]:
                fail("attempts.json", "%s.evidence.phases[%d].groups[%d].success" % (where, pi, gi), group_success(g), g["success"])
        if phase_solved(p) != p["solved"]:
            fail("attempts.json", "%s.evidence.phases[%d].solved" % (where, pi), phase_solved(p), p["solved"])
        solved.append(p["solved"])
    if e["arm_unchanged"] is None:
        return "unscored", None, None
    n = r["expected_turns"]
    functional = len(solved) > 0 and len(solved) == n and all(solved) and solved[-1] and e["arm_unchanged"]
    delivered = functional and len(e["turns"]) == n
    for t in e["turns"]:
        ok = (t["termination"] == "completed" and t["agent_finished"] and t["final_text"]
              and t["last_test"] is not None and t["last_test"]["passed"])
        if r["language"] == "typescript":
            ok = ok and t["last_typecheck"] is not None and t["last_typecheck"]["passed"]
        delivered = delivered and ok
    return "scored", functional, delivered


# ---- pooling, as evalctl's report pools -----------------------------------

def wilson(k, n):
    if n <= 0 or k < 0 or k > n:
        return None, None
    z = Z975
    nf = float(n)
    p = k / nf
    den = 1 + z * z / nf
    center = (p + z * z / (2 * nf)) / den
    half = z / den * math.sqrt(p * (1 - p) / nf + z * z / (4 * nf * nf))
    low, high = center - half, center + half
    if k == 0 or low < 0:
        low = 0.0
    if k == n or high > 1:
        high = 1.0
    return low, high


def rate(k, n):
    lo, hi = wilson(k, n)
    return {"count": k, "of": n, "rate": (k / float(n)) if n > 0 else None, "wilson_low": lo, "wilson_high": hi}


def median(xs):
    if not xs:
        return None
    xs = sorted(xs)
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 == 1 else (xs[m - 1] + xs[m]) / 2


def in_plan(r):
    return r["replaced_by"] is None


def measured(r):
    return (r["status"] == "scored" and r["native_output_tokens"] is not None and r["decode_seconds"] is not None
            and r["task_seconds"] is not None)


def pool(rows):
    s = {"attempts": 0, "states": {}, "completed": 0, "scored": 0, "ungraded": 0, "unscored": 0, "measured": 0,
         "unmeasured": 0, "terminations": {}}
    fun = dele = 0
    tok = draft_tok = draft_acc = 0
    dec = task = 0.0
    all_tok, all_task = 0, 0.0
    tok_n = task_n = 0
    draft_seen = False
    secs = []
    src = set()
    for r in rows:
        s["states"][r["state"]] = s["states"].get(r["state"], 0) + 1
        if not in_plan(r):
            continue
        s["attempts"] += 1
        if r["state"] == "completed":
            s["completed"] += 1
        if r["status"] == "scored":
            s["scored"] += 1
        elif r["status"] == "ungraded":
            s["ungraded"] += 1
            continue
        else:
            s["unscored"] += 1
            continue
        fun += 1 if r["functional"] else 0
        dele += 1 if r["delivered"] else 0
        if r["termination"] is not None:
            s["terminations"][r["termination"]] = s["terminations"].get(r["termination"], 0) + 1
        if r["native_output_tokens"] is not None:
            all_tok += r["native_output_tokens"]
            tok_n += 1
        if r["task_seconds"] is not None:
            all_task += r["task_seconds"]
            task_n += 1
            secs.append(r["task_seconds"])
        if not measured(r):
            s["unmeasured"] += 1
            continue
        s["measured"] += 1
        ts = r["timings_source"]
        if ts is None or ts not in ("server", "client", "mixed", "none"):
            src.add("unknown")
        elif ts != "none":
            src.add(ts)
        tok += r["native_output_tokens"]
        dec += r["decode_seconds"]
        task += r["task_seconds"]
        if r["draft_tokens"] is not None and r["draft_accepted"] is not None:
            draft_seen = True
            draft_tok += r["draft_tokens"]
            draft_acc += r["draft_accepted"]
    s["functional"] = rate(fun, s["scored"])
    s["delivered"] = rate(dele, s["scored"])
    s.update({"native_output_tokens": None, "decode_seconds": None, "task_seconds": None, "decode_tps": None,
              "task_output_tps": None, "timings_source": None})
    if s["measured"] > 0:
        s["native_output_tokens"], s["decode_seconds"], s["task_seconds"] = tok, dec, task
        if dec > 0:
            s["decode_tps"] = float(tok) / dec
        if task > 0:
            s["task_output_tps"] = float(tok) / task
        if "unknown" in src:
            s["timings_source"] = "unknown"
        elif "mixed" in src or ("server" in src and "client" in src):
            s["timings_source"] = "mixed"
        elif "client" in src:
            s["timings_source"] = "client"
        elif "server" in src:
            s["timings_source"] = "server"
    s["total_output_tokens"] = all_tok if tok_n > 0 else None
    s["total_output_tokens_attempts"] = tok_n
    s["total_task_seconds"] = all_task if task_n > 0 else None
    s["total_task_seconds_attempts"] = task_n
    s["median_attempt_seconds"] = median(secs)
    s["median_attempt_seconds_attempts"] = len(secs) if secs else 0
    s["draft_tokens"] = s["draft_accepted"] = s["draft_acceptance"] = None
    if draft_seen:
        s["draft_tokens"], s["draft_accepted"] = draft_tok, draft_acc
        if draft_tok > 0:
            s["draft_acceptance"] = float(draft_acc) / float(draft_tok)
    return s


def gain(v, base):
    if v is None or base is None or base == 0:
        return None
    return (v / base - 1) * 100


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    total = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, float(Fraction(total, 2 ** (n - 1))))


def repeat_key(s):
    i = s.rfind("-")
    tail = s[i + 1:]
    return int(tail) if re.fullmatch(r"\+?[0-9]+", tail) else None


def repeat_less(a, b):
    na, nb = repeat_key(a), repeat_key(b)
    if na is not None and nb is not None and na != nb:
        return na < nb
    return a < b


def stable_sort(xs, less):
    out = []
    for x in xs:  # insertion sort: stable
        i = len(out)
        while i > 0 and less(x, out[i - 1]):
            i -= 1
        out.insert(i, x)
    return out


def transitions(base_rows, cand_rows):
    def index(rows):
        out, seen = {}, {}
        for r in rows:
            if not in_plan(r):
                continue
            k = (r["case"], r["repeat"])
            out[(r["case"], r["repeat"], seen.get(k, 0))] = r
            seen[k] = seen.get(k, 0) + 1
        return out
    bi, ci = index(base_rows), index(cand_rows)
    res = {}
    for what in ("functional", "delivered"):
        t = {"pairs": 0, "both_pass": 0, "both_fail": 0, "candidate_improves": 0, "candidate_regresses": 0, "unpaired": 0}
        for k in set(bi) | set(ci):
            b, c = bi.get(k), ci.get(k)
            if b is None or c is None or b["status"] != "scored" or c["status"] != "scored":
                t["unpaired"] += 1
                continue
            t["pairs"] += 1
            bv, cv = b[what], c[what]
            if bv and cv:
                t["both_pass"] += 1
            elif not bv and not cv:
                t["both_fail"] += 1
            elif cv:
                t["candidate_improves"] += 1
            else:
                t["candidate_regresses"] += 1
        t["mcnemar_exact_p"] = mcnemar(t["candidate_improves"], t["candidate_regresses"]) if t["pairs"] else None
        res[what] = t
    return res


class PCG:
    """Go's math/rand/v2 PCG (128-bit LCG, DXSM output)."""
    MUL = (2549297995355413924 << 64) | 4865540595714422341
    INC = (6364136223846793005 << 64) | 1442695040888963407

    def __init__(self, hi, lo):
        self.state = (hi << 64) | lo

    def uint64(self):
        self.state = (self.state * self.MUL + self.INC) & ((1 << 128) - 1)
        hi, lo = self.state >> 64, self.state & MASK64
        hi ^= hi >> 32
        hi = (hi * 0xda942042e4dd58b5) & MASK64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & MASK64
        return hi


def bounded(rng, n):
    x = rng.uint64() * n
    hi, lo = x >> 64, x & MASK64
    if lo < n:
        thresh = (-n) % (1 << 64) % n
        while lo < thresh:
            x = rng.uint64() * n
            hi, lo = x >> 64, x & MASK64
    return hi


def ratio_of(cs, w):
    bt = bs = ct = csec = 0.0
    for i, c in enumerate(cs):
        m = 1.0
        if w is not None:
            if w[i] == 0:
                continue
            m = float(w[i])
        bt += m * c[0]
        bs += m * c[1]
        ct += m * c[2]
        csec += m * c[3]
    if bs <= 0 or csec <= 0 or bt <= 0:
        return None
    return (ct / csec) / (bt / bs)


def quantile(xs, q):
    if len(xs) == 1:
        return xs[0]
    h = q * float(len(xs) - 1)
    lo = math.floor(h)
    i = int(lo)
    if i >= len(xs) - 1:
        return xs[-1]
    return xs[i] + (h - lo) * (xs[i + 1] - xs[i])


def ratio_interval(base_rows, cand_rows, cases):
    sums = {}
    for rows, off in ((base_rows, 0), (cand_rows, 2)):
        for r in rows:
            if in_plan(r) and measured(r):
                s = sums.setdefault(r["case"], [0.0, 0.0, 0.0, 0.0])
                s[off] += float(r["native_output_tokens"])
                s[off + 1] += r["decode_seconds"]
    cs = [sums[c] for c in cases if c in sums and sums[c][1] > 0 and sums[c][3] > 0 and sums[c][0] > 0]
    out = {"ratio": ratio_of(cs, None), "low": None, "high": None, "cases": len(cs), "resamples": BOOTSTRAP_RESAMPLES,
           "seed": BOOTSTRAP_SEED}
    if out["ratio"] is None or len(cs) < 2:
        return out
    rng = PCG(BOOTSTRAP_SEED, BOOTSTRAP_SEED ^ 0x9e3779b97f4a7c15)
    n = len(cs)
    ratios = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        w = [0] * n
        for _ in range(n):
            w[bounded(rng, n)] += 1
        r = ratio_of(cs, w)
        if r is not None:
            ratios.append(r)
    if ratios:
        ratios.sort()
        out["low"], out["high"] = quantile(ratios, 0.025), quantile(ratios, 0.975)
    return out


def speed_interval(rows, cases, seconds):
    """An arm's pooled speed with its 95% case bootstrap interval: cases
    resampled with replacement, sums added in draw order (as evalctl does)."""
    by_case = {}
    for r in rows:
        if in_plan(r) and measured(r):
            s = by_case.setdefault(r["case"], [0.0, 0.0])
            s[0] += float(r["native_output_tokens"])
            s[1] += r[seconds]
    cs = [by_case[c] for c in cases if c in by_case and by_case[c][1] > 0]
    out = {"low": None, "high": None, "cases": len(cs), "resamples": BOOTSTRAP_RESAMPLES, "seed": BOOTSTRAP_SEED}
    n = len(cs)
    if n < 2:
        return out
    rng = PCG(BOOTSTRAP_SEED, BOOTSTRAP_SEED ^ 0x9e3779b97f4a7c15)
    vals = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        tok = sec = 0.0
        for _ in range(n):
            c = cs[bounded(rng, n)]
            tok += c[0]
            sec += c[1]
        if sec > 0:
            vals.append(tok / sec)
    if vals:
        vals.sort()
        out["low"], out["high"] = quantile(vals, 0.025), quantile(vals, 0.975)
    return out


def sweep_ordered(sw):
    pts = list(sw["arms"])
    numeric = len(sw["fields"]) == 1 and all(
        len(p["values"]) == 1 and isinstance(p["values"][0], (int, float)) and not isinstance(p["values"][0], bool)
        for p in pts)
    if numeric:
        pts = sorted(pts, key=lambda p: float(p["values"][0]))  # stable: ties as declared
    return pts


def order_sweeps(names, sweeps):
    out = list(names)
    pos = {n: i for i, n in enumerate(out)}
    taken = set()
    for sw in sweeps:
        ordered, places = [], []
        for p in sweep_ordered(sw):
            if p["arm"] in pos and p["arm"] not in taken:
                taken.add(p["arm"])
                ordered.append(p["arm"])
                places.append(pos[p["arm"]])
        for k, i in enumerate(sorted(places)):
            out[i] = ordered[k]
    return out


def sweep_reports(rep, sweeps):
    out, taken = [], set()
    arms = {a["arm"]: a for a in rep["arms"]}
    for sw in sweeps:
        pts = []
        for p in sweep_ordered(sw):
            a = arms.get(p["arm"])
            if a is None or p["arm"] in taken:
                continue
            taken.add(p["arm"])
            pts.append({"arm": p["arm"], "values": p["values"], "scored": a["scored"], "measured": a["measured"],
                        "decode_tps": a["decode_tps"], "task_output_tps": a["task_output_tps"],
                        "functional": a["functional"], "delivered": a["delivered"]})
        if pts:
            out.append({"name": sw["name"], "fields": sw["fields"], "points": pts})
    return out


def final_checks(r):
    e = r.get("evidence")
    if not e or not e["phases"] or not e["phases"][-1]["graded"]:
        return None
    g = e["phases"][-1]["groups"]
    return sum(x["passed"] for x in g), sum(x["total"] for x in g)


def long_context(arms, by_arm):
    out = []
    for a in arms:
        la = {"arm": a, "strategies": [], "attempts": 0}
        inp = out_tok = passed = total = 0
        pre = dec = 0.0
        ok_out = ok_checks = ok_pre = ok_dec = True
        for r in by_arm[a]:
            if not in_plan(r) or r["status"] != "scored" or r.get("input_tokens") is None:
                continue
            la["attempts"] += 1
            st = r.get("input_strategy")
            if st is not None and st not in la["strategies"]:
                la["strategies"].append(st)
            inp += r["input_tokens"]
            if r["native_output_tokens"] is not None:
                out_tok += r["native_output_tokens"]
            else:
                ok_out = False
            fc = final_checks(r)
            if fc is not None:
                passed += fc[0]
                total += fc[1]
            else:
                ok_checks = False
            if r["prompt_seconds"] is not None:
                pre += r["prompt_seconds"]
            else:
                ok_pre = False
            if r["decode_seconds"] is not None:
                dec += r["decode_seconds"]
            else:
                ok_dec = False
        if la["attempts"] == 0:
            continue
        la["input_tokens"] = inp
        la["output_tokens"] = out_tok if ok_out else None
        la["passed_checks"] = passed if ok_checks else None
        la["total_checks"] = total if ok_checks else None
        la["prefill_seconds"] = pre if ok_pre else None
        la["decode_seconds"] = dec if ok_dec else None
        la["server_processing_and_decode_seconds"] = pre + dec if ok_pre and ok_dec else None
        out.append(la)
    return out


def rebuild(rows, baseline, sweeps):
    arms, by_arm, by_case_arm = [], {}, {}
    for r in rows:
        if r["arm"] not in by_arm:
            arms.append(r["arm"])
            by_arm[r["arm"]] = []
        by_arm[r["arm"]].append(r)
        by_case_arm.setdefault((r["case"], r["arm"]), []).append(r)
    rep = {"baseline": "", "arms": [], "cases": [], "comparisons": []}
    if not arms:
        return rep
    rep["baseline"] = baseline or arms[0]
    if rep["baseline"] not in by_arm:
        fail("aggregates.json", "baseline", "an arm of the attempts", rep["baseline"])
        return rep
    arms = order_sweeps(arms, sweeps)
    for a in arms:
        s = pool(by_arm[a])
        s["arm"] = a
        hashes = []
        for r in by_arm[a]:
            if r["arm_hash"] and r["arm_hash"] not in hashes:
                hashes.append(r["arm_hash"])
        s["arm_hashes"] = hashes
        s["tokens_per_week"] = s["decode_tps"] * SECONDS_PER_WEEK if s["decode_tps"] is not None else None
        rep["arms"].append(s)
    base = next((a for a in rep["arms"] if a["arm"] == rep["baseline"]), None)
    if base is None:
        fail("aggregates.json", "baseline", "an arm of the attempts", rep["baseline"])
        return rep
    for a in rep["arms"]:
        a["decode_tps_gain_percent"] = a["task_output_tps_gain_percent"] = None
        if a["arm"] != rep["baseline"]:
            a["decode_tps_gain_percent"] = gain(a["decode_tps"], base["decode_tps"])
            a["task_output_tps_gain_percent"] = gain(a["task_output_tps"], base["task_output_tps"])
    cases = sorted({r["case"] for r in rows}, key=lambda c: c.encode())
    for a in rep["arms"]:
        a["decode_tps_interval"] = speed_interval(by_arm[a["arm"]], cases, "decode_seconds")
        a["task_output_tps_interval"] = speed_interval(by_arm[a["arm"]], cases, "task_seconds")
    for c in cases:
        cr = {"case": c, "arms": []}
        for a in arms:
            crow = by_case_arm.get((c, a), [])
            s = pool(crow)
            s["arm"] = a
            cells = [{"repeat": r["repeat"], "run_id": r["run_id"], "attempt_id": r["attempt_id"], "status": r["status"],
                      "functional": r["functional"], "delivered": r["delivered"]} for r in crow if in_plan(r)]
            s["attempt_outcomes"] = stable_sort(cells, lambda x, y: repeat_less(x["repeat"], y["repeat"]))
            cr["arms"].append(s)
        rep["cases"].append(cr)
    for a in arms:
        if a == rep["baseline"]:
            continue
        t = transitions(by_arm[rep["baseline"]], by_arm[a])
        rep["comparisons"].append({"baseline": rep["baseline"], "candidate": a, "functional": t["functional"],
                                   "delivered": t["delivered"],
                                   "decode_tps_ratio": ratio_interval(by_arm[rep["baseline"]], by_arm[a], cases)})
    if sweeps and sweep_reports(rep, sweeps):
        rep["sweeps"] = sweep_reports(rep, sweeps)
    lc = long_context(arms, by_arm)
    if lc:
        rep["long_context"] = lc
    return rep


def compare(file, path, want, got):
    """Every field of want must be in got with the same value."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            fail(file, path, "an object", got)
            return
        for k, v in want.items():
            if k not in got:
                fail(file, path + "." + k, v, "no such field")
            else:
                compare(file, path + "." + k, v, got[k])
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            fail(file, path + " length", len(want), len(got) if isinstance(got, list) else got)
            return
        for i, (w, g) in enumerate(zip(want, got)):
            compare(file, "%s[%d]" % (path, i), w, g)
    elif not same(want, got):
        fail(file, path, want, got)


# ---- CSV ------------------------------------------------------------------

def cell_matches(cell, v):
    if v is None:
        return cell == ""
    if isinstance(v, bool):
        return cell == ("true" if v else "false")
    if isinstance(v, (int, float)):
        try:
            return float(cell) == v if isinstance(v, float) else int(cell) == v
        except ValueError:
            return False
    return cell == str(v)


def check_attempts_csv(text, rows):
    """Every column of attempts.csv holds the attempts.json field of its name
    (columns are matched by name, so a column this checker does not know is
    still checked against the row)."""
    table = list(csv.reader(io.StringIO(text)))
    if not table:
        fail("attempts.csv", "header", ",".join(ATTEMPT_COLUMNS), "nothing")
        return
    header = table[0]
    missing = [c for c in ATTEMPT_COLUMNS if c not in header]
    if missing:
        fail("attempts.csv", "header", "columns " + ",".join(missing), ",".join(header))
        return
    if len(table) - 1 != len(rows):
        fail("attempts.csv", "lines", len(rows) + 1, len(table))
        return
    for i, (line, r) in enumerate(zip(table[1:], rows)):
        if len(line) != len(header):
            fail("attempts.csv", "line %d" % (i + 2), "%d fields" % len(header), "%d fields" % len(line))
            continue
        for name, cell in zip(header, line):
            if name not in r:
                fail("attempts.csv", "line %d, column %s" % (i + 2, name), "a field of attempts.json", "no such field")
            elif not cell_matches(cell, r.get(name)):
                fail("attempts.csv", "line %d, column %s" % (i + 2, name), r.get(name), cell)


def check_aggregates_csv(text, rep):
    """The arm and case rows of aggregates.csv hold the recomputed figures,
    matched by column name; columns of words (terminations, mixed, meaning)
    and figures this checker does not recompute are left to evalctl verify,
    as are rows of other scopes (the legend)."""
    table = list(csv.reader(io.StringIO(text)))
    if not table:
        fail("aggregates.csv", "header", ",".join(AGG_COLUMNS), "nothing")
        return
    header = table[0]
    missing = [c for c in AGG_COLUMNS if c not in header]
    if missing:
        fail("aggregates.csv", "header", "columns " + ",".join(missing), ",".join(header))
        return
    cmp = {c["candidate"]: c for c in rep["comparisons"]}

    def stats(s):
        v = {k: s[k] for k in ("attempts", "completed", "scored", "ungraded", "unscored", "measured", "unmeasured",
                               "native_output_tokens", "decode_seconds", "task_seconds", "decode_tps", "task_output_tps",
                               "median_attempt_seconds", "draft_tokens", "draft_accepted", "draft_acceptance")}
        v["timings_source"] = s["timings_source"] or ""
        for k in ("functional", "delivered"):
            r = s[k]
            v[k], v[k + "_rate"], v[k + "_wilson_low"], v[k + "_wilson_high"] = r["count"], r["rate"], r["wilson_low"], r["wilson_high"]
        return v
    want = []
    for a in rep["arms"]:
        row = {"scope": "arm", "arm": a["arm"], "case": ""}
        row.update(stats(a))
        row.update({"decode_tps_gain_percent": a["decode_tps_gain_percent"],
                    "task_output_tps_gain_percent": a["task_output_tps_gain_percent"],
                    "tokens_per_week": a["tokens_per_week"], "baseline": rep["baseline"]})
        c = cmp.get(a["arm"])
        for k in ("functional", "delivered"):
            t = c[k] if c else None
            for f in ("pairs", "both_pass", "both_fail", "candidate_improves", "candidate_regresses", "unpaired"):
                row[k + "_" + f] = t[f] if t else None
            row[k + "_mcnemar_exact_p"] = t["mcnemar_exact_p"] if t else None
        x = c["decode_tps_ratio"] if c else None
        row.update({"decode_tps_ratio": x["ratio"] if x else None, "decode_tps_ratio_low": x["low"] if x else None,
                    "decode_tps_ratio_high": x["high"] if x else None, "ratio_cases": x["cases"] if x else None,
                    "ratio_resamples": x["resamples"] if x else None})
        want.append(row)
    for cr in rep["cases"]:
        for s in cr["arms"]:
            row = {"scope": "case", "arm": s["arm"], "case": cr["case"]}
            row.update(stats(s))
            want.append(row)
    got = [line for line in table[1:] if line and line[0] in ("arm", "case")]
    if len(got) != len(want):
        fail("aggregates.csv", "arm and case lines", len(want), len(got))
        return
    for i, (line, w) in enumerate(zip(got, want)):
        if len(line) != len(header):
            fail("aggregates.csv", "%s line %d" % (w["scope"], i + 1), "%d fields" % len(header), "%d fields" % len(line))
            continue
        cells = dict(zip(header, line))
        for name, v in w.items():
            if not cell_matches(cells[name], v):
                fail("aggregates.csv", "%s %s %s, column %s" % (w["scope"], w["arm"], w["case"], name), v, cells[name])


# ---- the export -------------------------------------------------------------

def main(d):
    try:
        sums = open(os.path.join(d, "SHA256SUMS"), encoding="utf-8").read()
    except OSError as e:
        fail("SHA256SUMS", "(file)", "a readable file", str(e))
        return
    data, listed = {}, set()
    for n, line in enumerate(sums.rstrip("\n").split("\n")):
        m = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line)
        if not m or os.path.basename(m.group(2)) != m.group(2):
            fail("SHA256SUMS", "line %d" % (n + 1), "SHA256  FILE", line)
            continue
        name = m.group(2)
        listed.add(name)
        try:
            b = open(os.path.join(d, name), "rb").read()
        except OSError as e:
            fail(name, "sha256", m.group(1), "unreadable file: %s" % e)
            continue
        got = hashlib.sha256(b).hexdigest()
        if got != m.group(1):
            fail(name, "sha256", m.group(1), got)
        data[name] = b
    for name in FILES:
        if name not in listed:
            fail("SHA256SUMS", name, "a checksum line", "none")
    me = open(os.path.abspath(__file__), "rb").read()
    if "check.py" in data and data["check.py"] != me:
        fail("check.py", "(bytes)", "this checker (run a copy you trust against the export)", "a different file")
    if failures:
        return
    rows = loads(data["attempts.json"])
    for i, r in enumerate(rows):
        o = outcome(i, r)
        if o is None:
            continue
        for k, v in zip(("status", "functional", "delivered"), o):
            if not same(r[k], v):
                fail("attempts.json", "[%d] (attempt %s).%s" % (i, r["attempt_id"], k), "%s (from the evidence)" % show(v), r[k])
    check_attempts_csv(data["attempts.csv"].decode("utf-8"), rows)
    proto = loads(data["protocol.json"])
    sweeps = []
    for i, pr in enumerate(proto["runs"]):
        sweeps += (pr["plan"] or {}).get("sweeps") or []
        run = json.loads(pr["run"]) if isinstance(pr["run"], str) else pr["run"]
        if pr["run_id"] != run["id"]:
            fail("protocol.json", "runs[%d].run_id" % i, run["id"], pr["run_id"])
        want = pr["plan_file_sha256"] == run["plan_sha256"]
        if want != pr["plan_matches_run"]:
            fail("protocol.json", "runs[%d].plan_matches_run" % i, want, pr["plan_matches_run"])
    agg = loads(data["aggregates.json"])
    if not same(agg.get("options"), proto.get("options")):
        fail("aggregates.json", "options", proto.get("options"), agg.get("options"))
    # The baseline: the one the options name; without one, evalctl's default
    # (the first arm of the plan, or of the attempts), as aggregates.json
    # names it, provided it is an arm of the attempts.
    baseline = agg.get("options", {}).get("baseline", "") or agg.get("baseline", "")
    rep = rebuild(rows, baseline, sweeps)
    compare("aggregates.json", "baseline", rep["baseline"], agg.get("baseline"))
    compare("aggregates.json", "arms", rep["arms"], agg.get("arms"))
    compare("aggregates.json", "cases", rep["cases"], agg.get("cases"))
    compare("aggregates.json", "comparisons", rep["comparisons"], agg.get("comparisons"))
    for k in ("sweeps", "long_context"):
        if k in rep or k in agg:
            compare("aggregates.json", k, rep.get(k), agg.get(k))
    check_aggregates_csv(data["aggregates.csv"].decode("utf-8"), rep)


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    try:
        main(d)
    except (KeyError, TypeError, ValueError) as e:
        failures.append("FAIL: %s: not an export this checker can read: %s: %s" % (d, type(e).__name__, e))
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("OK: %s: checksums match, every outcome recomputes from its evidence and every aggregate from the attempts" % d)

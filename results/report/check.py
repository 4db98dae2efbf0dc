#!/usr/bin/env python3
"""Check an evalctl export without evalctl: python3 check.py [DIR...]

Standard library only; an independent re-implementation of what
`evalctl verify` checks, by the rules of docs/exports.md. From the files
beside it (or in each DIR) it re-derives:
  - SHA256SUMS: every checksum, and no file it does not list;
  - every number written as evalctl writes it, every field of the types
    evalctl writes, and no field missing or unknown;
  - every attempt's status, functional and delivered from its state and
    evidence (group results, protected and missing counts, verdicts, the
    arm-unchanged flag, each turn's hand-over, the expected turns); counts
    that are null are unknown, never a contradiction;
  - attempts.csv from attempts.json, cell by cell;
  - protocol.json's digests of the stored run.json and plan.json;
  - all of aggregates.json and aggregates.csv from the attempts and the
    protocol: runs and their progress and endpoint idle share, counts,
    Wilson intervals, sums, decode and task TPS, medians, gains, tokens per
    week, paired transitions with the exact McNemar p, bootstrap intervals
    (Go's PCG-DXSM stream), sweeps, long-context sums, replicas, the mixed
    check, the baseline and why, every note and comparison in words, the
    legend.
JSON files are compared by value (whitespace and key order are free), CSV
files cell by cell (quoting is free). Prints OK and exits 0, or one FAIL:
line per difference and exits 1.
"""

import bisect
import calendar
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
SCHEMA = "evalctl.report/v1"
PROTOCOL_SCHEMA = "evalctl.protocol/v2"
FILES = ["aggregates.csv", "aggregates.json", "attempts.csv", "attempts.json", "check.py", "protocol.json"]
BOOTSTRAP_RESAMPLES = 10000
BOOTSTRAP_SEED = 20261010
MASK64 = (1 << 64) - 1
# SHA-256 of the legend's terms and meanings ("term\0meaning\n" each, UTF-8),
# which evalctl's tests keep equal to the legend it writes.
LEGEND_SHA256 = "d15e56cc1e269db5b22eff5a6fda09c19fd4cf666b7a32852730eb9f5f359d84"
IDLE_METHOD = "idle_share = 1 - busy / wall per device label. busy: the union of the [started_at, endpoint_released_at] intervals of the attempts on the device (an attempt holds its endpoint from its start, server start included, to its last model response; grading is not endpoint time). wall: per runner session (registration or resume), from the session's first attempt start to its last attempt end (grading included), summed over sessions; rests (the plan's rest_seconds, from the event log) are taken out where the device was not busy during them. span_idle_share = 1 - busy / span, span: per session, from the device's first attempt start to its last endpoint release, rests taken out likewise (the device's own working span: what the runner could have kept it busy for). tail_seconds: per session, the cohort wall time after the device's last endpoint release, summed (on one device: the last grades, with nothing left for the device to serve); idle_share counts it, span_idle_share does not."

ATTEMPT_COLUMNS = [
    "run_id", "attempt_id", "slot", "arm", "arm_hash", "case", "language", "repeat", "seed", "state", "phase",
    "device", "started_at", "endpoint_released_at", "finished_at", "replacement_of", "replaced_by", "image_id",
    "suite", "suite_fingerprint", "status", "functional", "delivered", "expected_turns", "turns", "termination",
    "native_output_tokens", "decode_seconds", "task_seconds", "prompt_tokens", "prompt_seconds", "tool_calls",
    "tool_errors", "max_sequence_tokens", "draft_tokens", "draft_accepted", "timings_source", "tokens_source",
    "server_generated_tokens", "counter_check", "overlapped_attempts", "input_strategy", "input_tokens", "replica",
]
AGG_COLUMNS = [
    "scope", "arm", "case", "attempts", "completed", "scored", "ungraded", "unscored", "pending", "states", "replaced",
    "functional", "functional_rate", "functional_wilson_low", "functional_wilson_high",
    "delivered", "delivered_rate", "delivered_wilson_low", "delivered_wilson_high",
    "measured", "unmeasured", "overlapped", "native_output_tokens", "decode_seconds", "task_seconds", "decode_tps",
    "timings_source", "task_output_tps", "median_attempt_seconds", "terminations", "draft_tokens", "draft_accepted",
    "draft_acceptance", "decode_tps_gain_percent", "task_output_tps_gain_percent", "tokens_per_week", "baseline",
    "functional_pairs", "functional_both_pass", "functional_both_fail", "functional_candidate_improves",
    "functional_candidate_regresses", "functional_unpaired", "functional_mcnemar_exact_p", "delivered_pairs",
    "delivered_both_pass", "delivered_both_fail", "delivered_candidate_improves", "delivered_candidate_regresses",
    "delivered_unpaired", "delivered_mcnemar_exact_p", "decode_tps_ratio", "decode_tps_ratio_low",
    "decode_tps_ratio_high", "ratio_cases", "ratio_resamples", "mixed", "meaning",
]
ENDED = ("completed", "infra_failed", "cancelled", "cancelled_before_start", "cancelled_after_start")
STATE_WORDS = [
    ("cancelled_before_start", "cancelled before start"), ("cancelled_after_start", "cancelled after start"),
    ("interrupted", "interrupted"), ("infra_failed", "infrastructure failure(s)"), ("completed", "completed"),
    ("running", "running"), ("planned", "planned"),
]

failures = []


class Fail(Exception):
    """The export cannot be checked further."""


def fail(file, field, expected, got):
    failures.append("FAIL: %s: %s: expected %s, got %s" % (file, field, show(expected), show(got)))


def show(v):
    if isinstance(v, str):
        return v
    try:
        s = json.dumps(v, default=str)
    except (TypeError, ValueError):
        s = repr(v)
    return s if len(s) <= 120 else s[:117] + "..."


# ---- numbers and times as evalctl writes them ------------------------------

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
        return "-0" if math.copysign(1, x) < 0 else "0"
    if abs(x) < 1e-6 or abs(x) >= 1e21:
        m, e = repr(float(x)).split("e")
        if m.endswith(".0"):
            m = m[:-2]
        return m + "e" + e[0] + e[1:].lstrip("0")
    s = format(Decimal(repr(float(x))), "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def num_text(v):
    """The text evalctl writes for a number (a CSV cell, a JSON number)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return go_json_float(v)


def canonical_numbers(file, v, path=""):
    """Every float of a document in the text evalctl writes."""
    if isinstance(v, Num):
        if v.text != go_json_float(v):
            fail(file, path or "(root)", go_json_float(v) + " (the number as evalctl writes it)", v.text)
    elif isinstance(v, dict):
        for k, x in v.items():
            canonical_numbers(file, x, path + "." + k if path else k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            canonical_numbers(file, x, "%s[%d]" % (path, i))


TIME_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)")


def parse_time(s):
    """(nanoseconds since the epoch, the text Go writes for it), or None."""
    m = TIME_RE.fullmatch(s) if isinstance(s, str) else None
    if not m:
        return None
    y, mo, d, h, mi, se = (int(m.group(i)) for i in range(1, 7))
    if not (1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60 and se < 60):
        return None
    frac = m.group(7) or ""
    zone = m.group(8)
    off = 0
    if zone != "Z":
        off = (int(zone[1:3]) * 60 + int(zone[4:6])) * 60 * (1 if zone[0] == "+" else -1)
    ns = (calendar.timegm((y, mo, d, h, mi, se)) - off) * 10 ** 9 + int((frac + "000000000")[:9])
    f = frac.rstrip("0")
    text = "%04d-%02d-%02dT%02d:%02d:%02d%s%s" % (y, mo, d, h, mi, se, "." + f if f else "", "Z" if off == 0 else zone)
    return ns, text


def seconds_of(d):
    """Go's Duration.Seconds of d nanoseconds."""
    sec = abs(d) // 10 ** 9 * (1 if d >= 0 else -1)
    return float(sec) + float(d - sec * 10 ** 9) / 1e9


# ---- the types evalctl writes ----------------------------------------------
# A type is "s" (string), "i" (integer), "f" (number), "b" (bool), "t" (a
# time), a list [T], or a dict of fields; "?" before a type allows null. A
# field name ending in "~" is a pointer Go leaves out when null: present, it
# is not null; one ending in "^" a value Go leaves out when empty: present,
# it is neither null nor empty ("", 0).

EVIDENCE = {"arm_unchanged": "?b", "phases": [{
    "phase": "i", "graded": "b", "protected_changes_count": "i", "missing_starter_files_count": "i",
    "groups": [{"name": "s", "required": "b", "passed": "?i", "failed": "?i", "total": "?i", "declared": "i",
                "exit_code": "i", "timed_out": "b", "success": "b", "unrepresentable^": "i"}], "solved": "b"}],
    "turns": [{"phase": "i", "termination": "s", "agent_finished": "b", "final_text": "b",
               "last_test": "?check", "last_typecheck": "?check"}],
    "agent~": "agent"}
CHECK = {"exit_code": "i", "passed": "b"}
AGENT = {"config_unchanged": "?b"}
ROW = {
    "run_id": "s", "attempt_id": "s", "slot": "i", "arm": "s", "arm_hash": "s", "case": "s", "language": "s",
    "repeat": "s", "seed": "i", "state": "s", "phase": "?s", "device": "s", "started_at": "?t",
    "endpoint_released_at": "?t", "finished_at": "?t", "replacement_of": "?s", "replaced_by": "?s", "image_id": "s",
    "suite": "s", "suite_fingerprint": "?s", "status": "s", "functional": "?b", "delivered": "?b",
    "expected_turns": "i", "turns": "?i", "termination": "?s", "native_output_tokens": "?i", "decode_seconds": "?f",
    "task_seconds": "?f", "prompt_tokens": "?i", "prompt_seconds": "?f", "tool_calls": "?i", "tool_errors": "?i",
    "max_sequence_tokens": "?i", "draft_tokens": "?i", "draft_accepted": "?i", "timings_source": "?s",
    "tokens_source~": "s", "server_generated_tokens~": "i", "server_generated_tokens_within~": "i", "counter_check~": "s", "overlapped_attempts": "?i",
    "input_strategy~": "s", "input_tokens~": "i", "evidence": "?evidence", "replica^": "s",
    "agent_reported_tokens~": "i",
}
TIMELINE = {"sessions": ["t"], "rests": [{"from": "t", "to": "t"}], "schedules~": ["?schedule"]}
SCHEDULE = {"places": "?places", "longest_without_progress_seconds": "f"}
PLACES = {"total_seconds": "f", "grants": "i", "longest_seconds": "f"}
PROTOCOL = {"schema": "s", "evalctl_version": "s", "options": {"suite": "s", "baseline": "s", "allow_mixed": "b"},
            "runs": [{"run_id": "s", "run_file": "s", "run_file_sha256": "s", "plan_file": "s",
                      "plan_file_sha256": "s", "plan_matches_run": "b", "runner": "s", "timeline": "?timeline"}]}
NAMED = {"evidence": EVIDENCE, "check": CHECK, "timeline": TIMELINE, "schedule": SCHEDULE, "places": PLACES,
         "agent": AGENT}
INT64 = (-(1 << 63), (1 << 63) - 1)


def conform(file, path, v, t):
    """Whether v is of type t as evalctl writes it; fails naming the field."""
    where = path or "(root)"
    if isinstance(t, str) and t.startswith("?"):
        return v is None or conform(file, path, v, t[1:])
    if isinstance(t, str) and t in NAMED:
        t = NAMED[t]
    ok = True
    if t == "s":
        ok = isinstance(v, str)
    elif t == "i":
        ok = isinstance(v, int) and not isinstance(v, bool) and INT64[0] <= v <= INT64[1]
    elif t == "f":
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    elif t == "b":
        ok = isinstance(v, bool)
    elif t == "t":
        p = parse_time(v)
        if p is not None and p[1] != v:
            fail(file, where, p[1] + " (the time as evalctl writes it)", v)
            return False
        ok = p is not None
    elif isinstance(t, list):
        if not isinstance(v, list):
            ok = False
        else:
            return all([conform(file, "%s[%d]" % (path, i), x, t[0]) for i, x in enumerate(v)])
    elif isinstance(t, dict):
        if not isinstance(v, dict):
            ok = False
        else:
            good = True
            names = {k.rstrip("~^"): k for k in t}
            for k in v:
                if k not in names:
                    fail(file, path + "." + k if path else k, "no such field", "a field")
                    good = False
            for name, key in names.items():
                p = path + "." + name if path else name
                if name not in v:
                    if key == name:
                        fail(file, p, "the field", "no such field")
                        good = False
                    continue
                x = v[name]
                if key != name and (x is None or (key.endswith("^") and x in ("", 0) and not isinstance(x, bool))):
                    fail(file, p, "the field left out (evalctl writes none when it is empty)", x)
                    good = False
                    continue
                good = conform(file, p, x, t[key]) and good
            return good
    if not ok:
        fail(file, where, "a value of type %s" % show(t if isinstance(t, str) else "object"), show(v))
    return ok


def no_constant(name):
    raise ValueError("%s is not JSON" % name)


def loads(file, data):
    try:
        v = json.loads(data.decode("utf-8"), parse_float=Num, parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError) as e:
        fail(file, "(document)", "valid JSON", str(e))
        raise Fail()
    canonical_numbers(file, v)
    return v


def same(a, b):
    """Exact equality of a recomputed value a and a value b read from a file:
    numbers in the text evalctl writes for them."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return num_text(a) == (b.text if isinstance(b, Num) else num_text(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b if a is not None else b is None


def compare(file, path, want, got):
    """got must be want: every field, no other."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            fail(file, path or "(root)", "an object", got)
            return
        for k in sorted(want):
            p = path + "." + k if path else k
            if k not in got:
                fail(file, p, want[k], "no such field")
            else:
                compare(file, p, want[k], got[k])
        for k in sorted(set(got) - set(want)):
            fail(file, path + "." + k if path else k, "no such field", got[k])
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            fail(file, (path or "(root)") + " length", len(want), len(got) if isinstance(got, list) else got)
            return
        for i, (w, g) in enumerate(zip(want, got)):
            compare(file, "%s[%d]" % (path, i), w, g)
    elif not same(want, got):
        fail(file, path or "(root)", want, got)


# ---- outcomes from the evidence ------------------------------------------

def check_group(g):
    """(field, expected, got) of what contradicts itself in a group, or None."""
    counts = [g["passed"], g["failed"], g["total"]]
    known = sum(1 for c in counts if c is not None)
    if known not in (0, 3):
        return "total", "passed, failed and total all known or all null", "some null"
    if known == 3:
        if g["passed"] + g["failed"] != g["total"]:
            return "total", "%d (passed + failed)" % (g["passed"] + g["failed"]), g["total"]
        if g["passed"] < 0 or g["failed"] < 0:
            return "passed", "counts of 0 or more", "passed %d, failed %d" % (g["passed"], g["failed"])
        t = g["total"]
        want = (g["exit_code"] == 0 and not g["timed_out"] and t > 0 and g["passed"] == t
                and (g["declared"] == 0 or t == g["declared"]))
        if want != g["success"]:
            return "success", want, g["success"]
    return None


def phase_solved(p):
    ok = p["protected_changes_count"] == 0 and p["missing_starter_files_count"] == 0
    for g in p["groups"]:
        if g["required"] and not g["success"]:
            ok = False
    return ok


def group_only_unrepresentable(g):
    """The group fails only for tests the grading boundary cannot represent:
    every failed test is one, and the run ended with the status of failed
    tests (1), in time, with the declared tests."""
    t = g["total"]
    return (not g["success"] and t is not None and g.get("unrepresentable", 0) > 0 and g["failed"] == g.get("unrepresentable", 0)
            and t > 0 and (g["declared"] == 0 or t == g["declared"]) and g["exit_code"] == 1 and not g["timed_out"])


def phase_blocked_by_boundary(p):
    """The phase falls short of solved only by such tests."""
    if p["solved"] or p["protected_changes_count"] != 0 or p["missing_starter_files_count"] != 0:
        return False
    failing = [g for g in p["groups"] if g["required"] and not g["success"]]
    return bool(failing) and all(group_only_unrepresentable(g) for g in failing)


MEASURE_FIELDS = ["turns", "termination", "native_output_tokens", "decode_seconds", "task_seconds", "prompt_tokens",
                  "prompt_seconds", "tool_calls", "tool_errors", "max_sequence_tokens", "draft_tokens",
                  "draft_accepted", "timings_source", "tokens_source", "server_generated_tokens", "counter_check",
                  "overlapped_attempts", "input_strategy", "input_tokens", "suite_fingerprint"]


def check_row(i, r):
    """Row i's facts and outcome; a failure for what contradicts itself."""
    where = "[%d] (attempt %s)" % (i, r["attempt_id"])
    if r["phase"] is not None and r["state"] != "running":
        fail("attempts.json", where + ".phase", "null (the attempt is not running)", r["phase"])
    cc = r.get("counter_check")
    if cc is not None and cc != "shared":
        if r["native_output_tokens"] is None or r.get("server_generated_tokens") is None:
            fail("attempts.json", where + ".counter_check", "null (no recorded and server count to compare)", cc)
        else:
            off = abs(r["native_output_tokens"] - r["server_generated_tokens"])
            within = r.get("server_generated_tokens_within") or 0
            want = "match" if off == 0 and within == 0 else "plausible" if off <= within else "mismatch"
            if cc != want:
                fail("attempts.json", where + ".counter_check", want + " (recorded vs server count)", cc)
    e = r["evidence"]
    if r["state"] != "completed":
        if e is not None:
            fail("attempts.json", where + ".evidence", "null (the attempt never completed)", "evidence")
        status = "pending" if r["state"] in ("planned", "running") else "unscored"
        for k in MEASURE_FIELDS:
            if r.get(k) is not None:
                fail("attempts.json", where + "." + k, "null (the attempt did not complete)", "a value")
        return status, None, None
    if e is None:
        fail("attempts.json", where + ".evidence", "what the outcome is computed from", "null")
        return None
    solved, graded = [], True
    for pi, p in enumerate(e["phases"]):
        if not p["graded"]:
            graded = False
            continue
        for gi, g in enumerate(p["groups"]):
            c = check_group(g)
            if c:
                fail("attempts.json", "%s.evidence.phases[%d].groups[%d].%s" % (where, pi, gi, c[0]), c[1], c[2])
        if phase_solved(p) != p["solved"]:
            fail("attempts.json", "%s.evidence.phases[%d].solved" % (where, pi), phase_solved(p), p["solved"])
        solved.append(p["solved"])
    for ti, t in enumerate(e["turns"]):
        for name in ("last_test", "last_typecheck"):
            c = t[name]
            if c is not None and c["passed"] and c["exit_code"] != 0:
                fail("attempts.json", "%s.evidence.turns[%d].%s.passed" % (where, ti, name), "false (exit status %d)" % c["exit_code"], True)
    n = r["expected_turns"]
    if not graded or not e["phases"] or len(e["phases"]) != len(e["turns"]):
        return "ungraded", None, None
    # An agent command's configuration counts as part of the arm.
    agent = e.get("agent")
    if e["arm_unchanged"] is None or agent is not None and agent["config_unchanged"] is None:
        return "unscored", None, None
    arm_ok = e["arm_unchanged"] and (agent is None or agent["config_unchanged"])
    blocked = [phase_blocked_by_boundary(p) for p in e["phases"]]
    if (arm_ok and len(solved) == n and n > 0 and any(blocked)
            and all(s or b for s, b in zip(solved, blocked))):
        # Only tests the boundary cannot represent stand between the
        # attempt and functional: unknown, not a failure.
        return "ungraded", None, None
    functional = len(solved) == n and all(solved) and solved[-1] and arm_ok
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
    s = {"attempts": 0, "states": {}, "replaced": {}, "completed": 0, "scored": 0, "ungraded": 0, "unscored": 0,
         "pending": 0, "measured": 0, "unmeasured": 0, "terminations": {}}
    fun = dele = 0
    tok = draft_tok = draft_acc = overlapped = 0
    dec = task = 0.0
    all_tok, all_task = 0, 0.0
    tok_n = task_n = 0
    draft_seen = overlap_unknown = False
    secs = []
    src = set()
    for r in rows:
        if not in_plan(r):
            s["replaced"][r["state"]] = s["replaced"].get(r["state"], 0) + 1
            continue
        s["states"][r["state"]] = s["states"].get(r["state"], 0) + 1
        s["attempts"] += 1
        if r["state"] == "completed":
            s["completed"] += 1
        if r["status"] == "scored":
            s["scored"] += 1
        elif r["status"] in ("ungraded", "pending"):
            s[r["status"]] += 1
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
        if r["overlapped_attempts"] is None:
            overlap_unknown = True
        elif r["overlapped_attempts"] > 0:
            overlapped += 1
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
              "task_output_tps": None, "timings_source": None, "overlapped": None})
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
        if not overlap_unknown:
            s["overlapped"] = overlapped
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


def tokens_per_week(tok, dec):
    """The one definition: pooled tokens x 604800 / pooled decode seconds."""
    if tok is None or dec is None or dec <= 0:
        return None
    return float(tok) * SECONDS_PER_WEEK / dec


def mcnemar(b, c):
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    total = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, float(Fraction(total, 2 ** (n - 1))))


def format_p(p):
    if p >= 0.1:
        return "%.2f" % p
    if p < 0.0001:
        return "< 0.0001"
    return "%.2g" % p


def repeat_key(s):
    tail = s[s.rfind("-") + 1:]
    return int(tail) if re.fullmatch(r"[+-]?[0-9]+", tail) and -(1 << 63) <= int(tail) < (1 << 63) else None


def repeat_less(a, b):
    na, nb = repeat_key(a), repeat_key(b)
    if na is not None and nb is not None and na != nb:
        return na < nb
    return a.encode() < b.encode()


def stable_sort(xs, less):
    out = []
    for x in xs:  # insertion sort: stable
        i = len(out)
        while i > 0 and less(x, out[i - 1]):
            i -= 1
        out.insert(i, x)
    return out


def transitions(base_name, cand_name, base_rows, cand_rows):
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
        t["mcnemar_exact_p"] = None
        if t["pairs"] == 0:
            words = "%s vs %s: no paired scored attempts, so %s cannot be compared" % (cand_name, base_name, what)
        else:
            p = mcnemar(t["candidate_improves"], t["candidate_regresses"])
            t["mcnemar_exact_p"] = p
            counts = "%d/%d vs %d/%d" % (t["both_pass"] + t["candidate_improves"], t["pairs"],
                                         t["both_pass"] + t["candidate_regresses"], t["pairs"])
            if t["candidate_improves"] + t["candidate_regresses"] == 0:
                words = "%s vs %s: %s (%s) agrees on every one of %d pairs; no difference to test" % (
                    cand_name, base_name, what, counts, t["pairs"])
            else:
                words = "%s vs %s: the difference in %s (%s; %s improves on %d, regresses on %d) is %s (McNemar exact p = %s)" % (
                    cand_name, base_name, what, counts, cand_name, t["candidate_improves"], t["candidate_regresses"],
                    "inside the noise" if p >= 0.05 else "unlikely to be noise", format_p(p))
        if t["unpaired"] > 0 and t["pairs"] > 0:
            words += "; %d unpaired not counted" % t["unpaired"]
        t["words"] = words
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


DRAWS = {}


def draws(n):
    """The bootstrap's draws of n cases: the same stream for every n-case
    resampling, so computed once."""
    if n not in DRAWS:
        rng = PCG(BOOTSTRAP_SEED, BOOTSTRAP_SEED ^ 0x9e3779b97f4a7c15)
        DRAWS[n] = [[bounded(rng, n) for _ in range(n)] for _ in range(BOOTSTRAP_RESAMPLES)]
    return DRAWS[n]


def quantile(xs, q):
    if len(xs) == 1:
        return xs[0]
    h = q * float(len(xs) - 1)
    lo = math.floor(h)
    i = int(lo)
    if i >= len(xs) - 1:
        return xs[-1]
    return xs[i] + (h - lo) * (xs[i + 1] - xs[i])


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


MEMO = {}


def ratio_interval(base_name, cand_name, base_rows, cand_rows, cases):
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
    head = "%s vs %s: decode TPS ratio" % (cand_name, base_name)
    if out["ratio"] is None:
        out["words"] = head + ": no case with measured attempts in both arms"
        return out
    key = ("ratio", tuple(tuple(c) for c in cs))
    if key not in MEMO:
        MEMO[key] = None
        if len(cs) >= 2:
            n = len(cs)
            ratios = []
            for d in draws(n):
                w = [0] * n
                for j in d:
                    w[j] += 1
                r = ratio_of(cs, w)
                if r is not None:
                    ratios.append(r)
            if ratios:
                ratios.sort()
                MEMO[key] = (quantile(ratios, 0.025), quantile(ratios, 0.975))
    if MEMO[key] is None:
        out["words"] = "%s %.3f over %d case; too few cases for an interval" % (head, out["ratio"], out["cases"])
        return out
    lo, hi = out["low"], out["high"] = MEMO[key]
    verdict = "excludes 1: the speed difference is outside the noise"
    if lo <= 1 and hi >= 1:
        verdict = "includes 1: the speed difference is inside the noise"
    out["words"] = "%s %.3f (95%% paired bootstrap interval %.3f to %.3f over %d cases, %d resamples) %s" % (
        head, out["ratio"], lo, hi, out["cases"], BOOTSTRAP_RESAMPLES, verdict)
    return out


def speed_interval(rows, cases, seconds):
    """A pooled speed's 95% case bootstrap interval: cases resampled with
    replacement, sums added in draw order (as evalctl does)."""
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
    key = ("speed", tuple(tuple(c) for c in cs))
    if key not in MEMO:
        vals = []
        for d in draws(n):
            tok = sec = 0.0
            for j in d:
                tok += cs[j][0]
                sec += cs[j][1]
            if sec > 0:
                vals.append(tok / sec)
        MEMO[key] = None
        if vals:
            vals.sort()
            MEMO[key] = (quantile(vals, 0.025), quantile(vals, 0.975))
    if MEMO[key] is not None:
        out["low"], out["high"] = MEMO[key]
    return out


# ---- sweeps, long context, replicas ----------------------------------------

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


def sweep_reports(arms, sweeps):
    out, taken = [], set()
    by = {a["arm"]: a for a in arms}
    for sw in sweeps:
        pts = []
        for p in sweep_ordered(sw):
            a = by.get(p["arm"])
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
    e = r["evidence"]
    if not e or not e["phases"] or not e["phases"][-1]["graded"]:
        return None
    g = e["phases"][-1]["groups"]
    if any(x["passed"] is None or x["total"] is None for x in g):
        return None
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


def replica_speeds(arm, rows, cases):
    """An arm's decode speed per replica of its endpoint pool, and the notes."""
    by_rep, notes = {}, []
    for r in rows:
        if r.get("replica"):
            by_rep.setdefault(r["replica"], []).append(r)
    if not by_rep:
        return None, notes
    reps = []
    for n in sorted(by_rep, key=lambda s: s.encode()):
        rs = {"replica": n, "attempts": 0, "decode_tps": None}
        tok = sec = 0.0
        for r in by_rep[n]:
            if in_plan(r) and measured(r):
                rs["attempts"] += 1
                tok += float(r["native_output_tokens"])
                sec += r["decode_seconds"]
        if sec > 0:
            rs["decode_tps"] = tok / sec
        rs["decode_tps_interval"] = speed_interval(by_rep[n], cases, "decode_seconds")
        reps.append(rs)
        if rs["decode_tps"] is not None:
            notes.append("arm %s on replica %s: %.2f decode TPS over %d measured attempts" % (arm, n, rs["decode_tps"], rs["attempts"]))
        else:
            notes.append("arm %s on replica %s: decode TPS unknown (no measured attempt)" % (arm, n))
    for x in range(len(reps)):
        for y in range(x + 1, len(reps)):
            p, q = reps[x], reps[y]
            if p["decode_tps"] is None or q["decode_tps"] is None:
                continue
            pi, qi = p["decode_tps_interval"], q["decode_tps_interval"]
            if pi["low"] is None or qi["low"] is None:
                notes.append("arm %s: replicas %s (%.2f decode TPS over %d attempts) and %s (%.2f over %d): too few measured cases to tell their speeds apart" % (
                    arm, p["replica"], p["decode_tps"], p["attempts"], q["replica"], q["decode_tps"], q["attempts"]))
                continue
            if pi["high"] < qi["low"] or qi["high"] < pi["low"]:
                notes.append("WARNING arm %s: replicas differ in speed by more than the run's noise: %s %.2f decode TPS (95%% interval %.2f-%.2f, %d attempts) vs %s %.2f (%.2f-%.2f, %d attempts); the arm's speed mixes machines" % (
                    arm, p["replica"], p["decode_tps"], pi["low"], pi["high"], p["attempts"], q["replica"], q["decode_tps"],
                    qi["low"], qi["high"], q["attempts"]))
    return reps, notes


# ---- runs: identity, progress, endpoint idle --------------------------------

def run_info(run, suite_option, runner):
    suite = run.get("suite") or {}
    s = {"name": suite.get("name", ""), "version": suite.get("version", ""), "fingerprint": suite.get("fingerprint", "")}
    if suite_option == "":
        graded = s["name"] + "@" + s["version"]
    elif "@" in suite_option:
        graded = suite_option
    else:
        graded = s["name"] + "@" + suite_option
    created = parse_time(run.get("created_at", "0001-01-01T00:00:00Z"))
    info = {"id": run.get("id", ""), "kind": run.get("kind", ""), "created_at": created[1] if created else run.get("created_at"),
            "plan_sha256": run.get("plan_sha256", ""), "suite": s, "image_id": run.get("image_id", ""),
            "evalctl_version": run.get("evalctl_version", ""), "graded_suite": graded, "runner": runner}
    if run.get("name"):
        info["name"] = run["name"]
    if run.get("arm_order"):
        info["arm_order"] = run["arm_order"]
    if run.get("arm_identities"):
        info["arm_identities"] = {k: None if v is None else {"sha256": v.get("sha256", ""), "fields": v.get("fields")}
                                  for k, v in run["arm_identities"].items()}
    return info


def run_progress(info, rows):
    p = {"planned": 0, "ended": 0, "running": 0, "waiting": 0, "in_flight": []}
    running = []
    for r in rows:
        if not in_plan(r):
            continue
        p["planned"] += 1
        if r["state"] in ENDED:
            p["ended"] += 1
        elif r["state"] == "running":
            p["running"] += 1
            running.append(r)
        else:
            p["waiting"] += 1
    running = stable_sort(running, lambda a, b: a["slot"] < b["slot"])
    for r in running:
        p["in_flight"].append({"attempt_id": r["attempt_id"], "arm": r["arm"], "case": r["case"], "repeat": r["repeat"],
                               "phase": r["phase"] or ""})
    if info["runner"] == "active":
        p["state"] = "running"
    elif p["ended"] == p["planned"]:
        p["state"] = "complete"
    else:
        p["state"] = "stopped, resumable"
    sep = ": " if p["state"] == "stopped, resumable" else ", "
    w = "%s%s%d of %d attempts ended" % (p["state"], sep, p["ended"], p["planned"])
    if p["running"] > 0:
        what = "; ".join("%s %s/%s/%s" % (f["attempt_id"], f["arm"], f["case"], f["repeat"]) +
                         (" (" + f["phase"] + ")" if f["phase"] else "") for f in p["in_flight"])
        if p["state"] == "running":
            w += "; %d in flight: %s" % (p["running"], what)
        else:
            w += "; %d left running by a runner that stopped (a resume runs them again): %s" % (p["running"], what)
    if p["waiting"] > 0:
        w += "; %d waiting to run" % p["waiting"]
    if p["state"] == "stopped, resumable":
        w += "; 'evalctl run --resume' continues it"
    p["words"] = w
    return p


def union(spans):
    out = []
    for f, t in sorted(spans):
        if out and f <= out[-1][1]:
            if t > out[-1][1]:
                out[-1][1] = t
            continue
        out.append([f, t])
    return [tuple(x) for x in out]


def total(spans):
    return sum(t - f for f, t in spans)


def minus(a, b):
    out = []
    for x in a:
        cur = [x]
        for yf, yt in b:
            nxt = []
            for cf, ct in cur:
                if not yf < ct or not yt > cf:
                    nxt.append((cf, ct))
                    continue
                if yf > cf:
                    nxt.append((cf, yf))
                if yt < ct:
                    nxt.append((yt, ct))
            cur = nxt
        out.extend(cur)
    return out


def intersect(a, b):
    return minus(a, minus(a, b))


def endpoint_idle(rows, tl, running):
    ns = lambda s: parse_time(s)[0] if s is not None else None
    if tl is None or not any(r["endpoint_released_at"] is not None for r in rows):
        return None
    sessions = sorted(ns(s) for s in tl["sessions"])
    rests = [(ns(x["from"]), ns(x["to"])) for x in tl["rests"]]
    walls, spans, busy, count, unknown, devices = {}, {}, {}, {}, {}, []
    for r in rows:
        if r["started_at"] is None:
            continue
        d = r["device"]
        if d not in busy:
            devices.append(d)
            busy[d] = []
        start, rel, fin = ns(r["started_at"]), ns(r["endpoint_released_at"]), ns(r["finished_at"])
        end = fin
        if end is None or (rel is not None and rel > end):
            end = rel
        if rel is None or end is None:
            if d not in unknown:
                if running and r["state"] == "running":
                    unknown[d] = "attempt %s is still running: the share is known once the device's attempts have ended" % r["attempt_id"]
                else:
                    unknown[d] = "attempt %s (%s) has no recorded endpoint release: the runner stopped during it, so how long it held the endpoint is unknown" % (r["attempt_id"], r["state"])
            continue
        busy[d].append((start, rel))
        count[d] = count.get(d, 0) + 1
        k = bisect.bisect_right(sessions, start) - 1
        sp = spans.setdefault(d, {})
        if k not in sp:
            sp[k] = [start, rel]
        else:
            sp[k] = [min(sp[k][0], start), max(sp[k][1], rel)]
        if k not in walls:
            walls[k] = [start, end]
        else:
            walls[k] = [min(walls[k][0], start), max(walls[k][1], end)]
    wall = union([tuple(w) for w in walls.values()])
    rests = intersect(union(rests), wall)
    out = {"method": IDLE_METHOD, "devices": []}
    for d in sorted(devices, key=lambda s: s.encode()):
        di = {"device": d, "attempts": count.get(d, 0), "busy_seconds": None, "wall_seconds": None, "rest_seconds": None,
              "idle_share": None, "span_seconds": None, "span_idle_share": None, "tail_seconds": None}
        if d in unknown:
            di["why"] = unknown[d]
            out["devices"].append(di)
            continue
        b = union(busy[d])
        rest = total(minus(rests, b))
        w = total(wall) - rest
        bs, ws = seconds_of(total(b)), seconds_of(w)
        di["busy_seconds"], di["wall_seconds"], di["rest_seconds"] = bs, ws, seconds_of(rest)
        if w > 0:
            di["idle_share"] = 1 - bs / ws
        else:
            di["why"] = "no wall time"
        mine, tail = [], []
        for k, (f, t) in spans.get(d, {}).items():
            mine.append((f, t))
            if walls[k][1] > t:
                tail.append((t, walls[k][1]))
        mine = union(mine)
        span_d = total(mine) - total(minus(intersect(rests, mine), b))
        di["span_seconds"], di["tail_seconds"] = seconds_of(span_d), seconds_of(total(minus(union(tail), rests)))
        if span_d > 0:
            di["span_idle_share"] = 1 - bs / seconds_of(span_d)
        out["devices"].append(di)
    return out


# ---- the mixed check, the baseline, notes -----------------------------------

def short(h):
    return h[:19] + "\u2026" if len(h) > 19 else h


class OrderedSet:
    def __init__(self):
        self.keys, self.runs = [], {}

    def add(self, v, run):
        if v not in self.runs:
            self.keys.append(v)
            self.runs[v] = []
        if run not in self.runs[v]:
            self.runs[v].append(run)

    def describe(self):
        return " vs ".join("%s in run %s" % (short(k), ", ".join(self.runs[k])) for k in self.keys)


def diff_fields(a, b):
    out = []
    for k in set(a) | set(b):
        va, vb = a.get(k), b.get(k)
        if k in a and k in b and va == vb:
            continue
        out.append(k + " " + (va if k in a else "unset") + " vs " + (vb if k in b else "unset"))
    out.sort(key=lambda s: s.encode())
    return out or ["their identity digests (no field differs: the digests were computed differently)"]


def mixed_problems(runs, rows):
    out = []
    fps = OrderedSet()
    for r in rows:
        if r["suite_fingerprint"]:
            fps.add(r["suite_fingerprint"], r["run_id"])
    if len(fps.keys) > 1:
        out.append("suite fingerprints differ: " + fps.describe())
    imgs = OrderedSet()
    for ri in runs:
        if ri["image_id"]:
            imgs.add(ri["image_id"], ri["id"])
    for r in rows:
        if r["image_id"]:
            imgs.add(r["image_id"], r["run_id"])
    if len(imgs.keys) > 1:
        out.append("image IDs differ: " + imgs.describe())
    arms_of = {}
    for r in rows:
        arms_of.setdefault(r["run_id"], set()).add(r["arm"])
    per, missing = {}, set()
    for ri in runs:
        for arm in arms_of.get(ri["id"], ()):
            ident = (ri.get("arm_identities") or {}).get(arm)
            if ident is None:
                missing.add(arm)
                continue
            per.setdefault(arm, []).append((ri["id"], ident))
    decided = set()
    for arm in sorted(per, key=lambda s: s.encode()):
        if arm in missing:
            continue
        decided.add(arm)
        first = per[arm][0]
        for other in per[arm][1:]:
            if other[1]["sha256"] == first[1]["sha256"]:
                continue
            out.append("arm %s differs between run %s and run %s in %s" % (
                arm, first[0], other[0], "; ".join(diff_fields(first[1]["fields"] or {}, other[1]["fields"] or {}))))
    hashes, order = {}, []
    for r in rows:
        if not r["arm_hash"] or r["arm"] in decided:
            continue
        if r["arm"] not in hashes:
            hashes[r["arm"]] = OrderedSet()
            order.append(r["arm"])
        hashes[r["arm"]].add(r["arm_hash"], r["run_id"])
    for a in order:
        if len(hashes[a].keys) > 1:
            out.append("arm %s has different hashes: %s" % (a, hashes[a].describe()))
    return out


def default_baseline(runs, arm_names, by_arm):
    for ri in runs:
        order = ri.get("arm_order") or []
        for i, a in enumerate(order):
            if a in by_arm:
                if i == 0:
                    return a, "the first arm of run %s's plan (choose another with --baseline)" % ri["id"]
                return a, "the first arm of run %s's plan that has attempts here (choose another with --baseline)" % ri["id"]
        if order:
            break
    return arm_names[0], "the arm of the first attempt record; the run did not record its plan's arm order (choose another with --baseline)"


def by_state(counts):
    parts = ["%d %s" % (counts[s], w) for s, w in STATE_WORDS if counts.get(s, 0) > 0]
    known = {s for s, _ in STATE_WORDS}
    parts += ["%d %s" % (counts[k], k) for k in sorted(counts, key=lambda s: s.encode()) if k not in known and counts[k] > 0]
    return ", ".join(parts)


def count_notes(rows):
    ungraded = unmeasured = 0
    unscored, replaced = {}, {}
    suites = OrderedSet()
    for r in rows:
        if not in_plan(r):
            replaced[r["state"]] = replaced.get(r["state"], 0) + 1
            continue
        if r["status"] == "ungraded":
            ungraded += 1
            suites.add(r["suite"], r["run_id"])
        elif r["status"] == "unscored":
            unscored[r["state"]] = unscored.get(r["state"], 0) + 1
        elif r["status"] == "scored" and not measured(r):
            unmeasured += 1
    out = []
    if unmeasured:
        out.append("%d scored attempt(s) have no native output token count or no decode seconds (some response reported none): null, left out of decode TPS and task TPS, not counted as 0" % unmeasured)
    if ungraded:
        out.append("%d completed attempt(s) have no grade that can be computed under %s (an answer not graded there, or records that do not match up): shown as ungraded (-), not counted as failures" % (ungraded, ", ".join(suites.keys)))
    if sum(unscored.values()):
        out.append("%d attempt(s) ended without an outcome (%s): null, not counted" % (sum(unscored.values()), by_state(unscored)))
    if sum(replaced.values()):
        out.append("%d attempt(s) were replaced by a rerun of the same slot (%s): listed apart, not counted in the cohort" % (sum(replaced.values()), by_state(replaced)))
    return out


def counter_notes(rows):
    recovered = checked = plausible = imprecise = 0
    mismatches = []
    for r in rows:
        if r.get("tokens_source") == "server_counters":
            recovered += 1
        cc = r.get("counter_check")
        if cc is None and r["native_output_tokens"] is None and r.get("server_generated_tokens") is not None:
            imprecise += 1
        if cc == "match":
            checked += 1
        elif cc == "plausible":
            checked += 1
            plausible += 1
        elif cc == "mismatch":
            checked += 1
            mismatches.append("%s (%s %s %s: recorded %d, server %d)" % (r["attempt_id"], r["arm"], r["case"], r["repeat"],
                                                                         r["native_output_tokens"], r["server_generated_tokens"]))
    out = []
    if checked:
        out.append("server counters: %d attempt(s) with the server to themselves checked against /metrics deltas, %d mismatch(es)" % (checked, len(mismatches)))
    if plausible:
        out.append("server counters: %d of the checked attempt(s) only within the counters' printed precision (past it a delta is not exact; the responses' own figures are the record, the counters a plausibility check)" % plausible)
    if imprecise:
        out.append("%d attempt(s) with an unknown response count kept it unknown: the server's counters were past their printed precision" % imprecise)
    out += ["server counters MISMATCH: attempt " + m for m in mismatches]
    if recovered:
        out.append("%d attempt(s) with an unknown response count took their exact token count from the server's /metrics delta (token source server_counters)" % recovered)
    return out


def agent_claim_sums(rows):
    """Per arm: the agents' claimed tokens and the server's counts over the
    attempts with an outcome that have both."""
    by = {}
    for r in rows:
        if r["status"] == "unscored" or r.get("agent_reported_tokens") is None or r["native_output_tokens"] is None:
            continue
        s = by.setdefault(r["arm"], {"n": 0, "claim": 0, "counted": 0})
        s["n"] += 1
        s["claim"] += r["agent_reported_tokens"]
        s["counted"] += r["native_output_tokens"]
    return by


def claim_divergence(s):
    if s["counted"] <= 0:
        return None
    return 100 * float(s["claim"] - s["counted"]) / float(s["counted"])


def agent_notes(rows):
    by = agent_claim_sums(rows)
    out = []
    for a in sorted(by, key=lambda x: x.encode()):
        s = by[a]
        d = claim_divergence(s)
        div = "n/a: the server counted none" if d is None else "%+.1f%%" % d
        out.append("agent-reported usage, arm %s: the agent claimed %d generated tokens, the server counted %d (divergence %s) over %d attempt(s); every figure of the report is the server's" % (a, s["claim"], s["counted"], div, s["n"]))
    return out


def setup_of(arm):
    """An arm's model, endpoint and agent, as the model x agent table reads them."""
    ep = arm.get("endpoint") or {}
    s = {"arm": arm.get("name", ""), "model": ep.get("model", ""), "endpoint": ep.get("base_url", ""), "agent": "built-in", "command": False}
    if arm.get("profile"):
        s["endpoint"] = "profile " + arm["profile"].rstrip("/").split("/")[-1]
    elif ep.get("replicas"):
        s["endpoint"] = "pool of %d replicas" % len(ep["replicas"])
    ag = arm.get("agent")
    if ag and ag.get("command"):
        s["agent"], s["command"] = ag["command"][0], True
        if ag.get("image"):
            s["agent"] += " in " + ag["image"]
    return s


def agent_matrix(arms, setups, rows):
    """The model x agent table: rows model and endpoint, columns agent."""
    by = {}
    for s in setups:
        by.setdefault(s["arm"], s)
    chosen, count, command = [], {}, False
    for a in arms:
        s = by.get(a["arm"])
        if s is None:
            continue
        chosen.append(s)
        k = (s["model"], s["endpoint"], s["agent"])
        count[k] = count.get(k, 0) + 1
        command = command or s["command"]
    agents, places, col, cells = [], [], {}, {}
    for s in chosen:
        agent = s["agent"]
        if count[(s["model"], s["endpoint"], s["agent"])] > 1:
            agent += " [" + s["arm"] + "]"
        if agent not in col:
            col[agent] = len(agents)
            agents.append(agent)
        p = (s["model"], s["endpoint"])
        if p not in cells:
            places.append(p)
            cells[p] = {}
        cells[p][agent] = s["arm"]
    if not command or len(agents) < 2 or len(places) < 2:
        return None
    claims = agent_claim_sums(rows)
    by_arm = {a["arm"]: a for a in arms}
    out = {"agents": agents, "rows": []}
    for p in places:
        line = [None] * len(agents)
        for agent, arm in cells[p].items():
            a = by_arm[arm]
            c = {"arm": arm, "functional": a["functional"], "scored": a["scored"], "decode_tps": a["decode_tps"],
                 "measured": a["measured"], "agent_claimed_tokens": None, "server_counted_tokens": None,
                 "claim_attempts": 0, "divergence_percent": None}
            s = claims.get(arm)
            if s is not None:
                c["agent_claimed_tokens"], c["server_counted_tokens"], c["claim_attempts"] = s["claim"], s["counted"], s["n"]
                c["divergence_percent"] = claim_divergence(s)
            line[col[agent]] = c
        out["rows"].append({"model": p[0], "endpoint": p[1], "cells": line})
    return out


def timing_notes(arms):
    out = []
    for a in arms:
        src = a["timings_source"]
        if a["decode_tps"] is None or src is None or src == "server":
            continue
        if src == "client":
            what = "is client-measured (first to last streamed token, or the wall time of a response), not server timings"
        elif src == "mixed":
            what = "pools server timings with client-measured decode time (mixed timing sources)"
        else:
            what = "rests on attempts whose timing source is unknown"
        out.append("%s: decode TPS %.2f %s: not comparable with server-timed figures, and the decode gains, tokens/week and decode TPS ratios computed from it inherit that" % (a["arm"], a["decode_tps"], what))
    return out


def run_schedule(tl):
    """The run's waits for sandbox places and longest time without
    progress, from each session's schedule event: summed (longest: the
    largest) only when every session reported it, null otherwise."""
    if tl is None or not tl.get("schedules"):
        return None
    scheds = tl["schedules"]
    rs = {"sessions": len(scheds), "sessions_reported": 0, "place_wait_seconds": None, "place_grants": None,
          "longest_place_wait_seconds": None, "longest_without_progress_seconds": None}
    wait, longest, still, grants = 0.0, 0.0, 0.0, 0
    missing, one_engine = [], []
    for i, s in enumerate(scheds):
        name = str(i + 1)
        if s is None:
            missing.append(name)
            continue
        rs["sessions_reported"] += 1
        still = max(still, float(s["longest_without_progress_seconds"]))
        p = s.get("places")
        if p is None:
            one_engine.append(name)
            continue
        wait += float(p["total_seconds"])
        grants += p["grants"]
        longest = max(longest, float(p["longest_seconds"]))
    why = []
    if missing:
        why.append("session(s) %s of %d wrote no schedule event (its runner was killed or still runs, or it predates the event)" % (", ".join(missing), rs["sessions"]))
    else:
        rs["longest_without_progress_seconds"] = still
    if one_engine:
        why.append("session(s) %s of %d ran on one engine, which counts no sandbox places" % (", ".join(one_engine), rs["sessions"]))
    if not missing and not one_engine:
        rs["place_wait_seconds"], rs["place_grants"], rs["longest_place_wait_seconds"] = wait, grants, longest
    if why:
        rs["why"] = "; ".join(why)
    return rs


def schedule_notes(runs):
    out = []
    for ri in runs:
        s = ri.get("schedule")
        if s is None:
            continue
        places = "time waiting for sandbox places unknown"
        if s["place_wait_seconds"] is not None:
            places = "waited for sandbox places %.1f s over %d grant(s), longest %.1f s" % (
                s["place_wait_seconds"], s["place_grants"], s["longest_place_wait_seconds"])
        still = "longest time without progress unknown"
        if s["longest_without_progress_seconds"] is not None:
            still = "longest time without progress %.1f s" % s["longest_without_progress_seconds"]
        note = "run %s: %s; %s (over %d of %d session(s))" % (ri["id"], places, still, s["sessions_reported"], s["sessions"])
        if s.get("why"):
            note += ": " + s["why"]
        out.append(note)
    return out


def idle_notes(runs):
    out = []
    for ri in runs:
        idle = ri.get("endpoint_idle")
        if not idle:
            continue
        for d in idle["devices"]:
            name = d["device"] or "(no label)"
            if d["idle_share"] is None:
                out.append("run %s, device %s: endpoint idle share unknown: %s" % (ri["id"], name, d.get("why", "")))
                continue
            note = "run %s, device %s: endpoint idle share %.2f%% (endpoint held %.1f s of %.1f s cohort wall time, %.1f s of rests excluded, over %d attempts)" % (
                ri["id"], name, d["idle_share"] * 100, d["busy_seconds"], d["wall_seconds"], d["rest_seconds"], d["attempts"])
            if d["span_idle_share"] is not None and d["tail_seconds"] is not None:
                note += "; over the device's own span (first start to last endpoint release, %.1f s) %.2f%%; grading tail after the last release %.1f s" % (
                    d["span_seconds"], d["span_idle_share"] * 100, d["tail_seconds"])
            out.append(note)
    return out


# ---- the report, rebuilt -----------------------------------------------------

def validate(rows):
    seen = {}
    for i, r in enumerate(rows):
        why = None
        st = r["status"]
        if st == "scored":
            if r["functional"] is None or r["delivered"] is None:
                why = "scored but functional or delivered is null"
            elif r["delivered"] and not r["functional"]:
                why = "delivered but not functional"
        elif st in ("ungraded", "unscored", "pending"):
            if r["functional"] is not None or r["delivered"] is not None:
                why = st + " but has an outcome"
        else:
            why = "unknown status %s" % json.dumps(st)
        if why is None and (r["arm"] == "" or r["case"] == ""):
            why = "no arm or case"
        if why is None and r["attempt_id"] in seen:
            why = "attempt id also in row %d: it would be pooled twice" % seen[r["attempt_id"]]
        seen.setdefault(r["attempt_id"], i)
        if why:
            fail("attempts.json", "(rows)", "rows a report can be built from", "row %d (attempt %s): %s" % (i, r["attempt_id"], why))
            raise Fail()


def rebuild(runs, timelines, rows, opts, sweeps, setups):
    validate(rows)
    by_run = {}
    for r in rows:
        by_run.setdefault(r["run_id"], []).append(r)
    for ri in runs:
        ri["progress"] = run_progress(ri, by_run.get(ri["id"], []))
        idle = endpoint_idle(by_run.get(ri["id"], []), timelines.get(ri["id"]), ri["runner"] == "active")
        if idle is not None:
            ri["endpoint_idle"] = idle
        sched = run_schedule(timelines.get(ri["id"]))
        if sched is not None:
            ri["schedule"] = sched
    rep = {"schema": SCHEMA, "options": opts, "runs": runs, "mixed": mixed_problems(runs, rows), "baseline": "",
           "arms": [], "cases": [], "comparisons": [], "notes": []}
    if rep["mixed"] and not opts["allow_mixed"]:
        fail("attempts.json", "(rows)", "rows a report can be built from", "refusing to pool: " + "; ".join(rep["mixed"]))
        raise Fail()
    arms, by_arm, by_case_arm = [], {}, {}
    for r in rows:
        if r["arm"] not in by_arm:
            arms.append(r["arm"])
            by_arm[r["arm"]] = []
        by_arm[r["arm"]].append(r)
        by_case_arm.setdefault((r["case"], r["arm"]), []).append(r)
    if not arms:
        return rep
    rep["baseline"] = opts["baseline"]
    if not rep["baseline"]:
        rep["baseline"], rep["baseline_why"] = default_baseline(runs, arms, by_arm)
    elif rep["baseline"] not in by_arm:
        fail("aggregates.json", "baseline", "an arm of the attempts", rep["baseline"])
        raise Fail()
    arms = order_sweeps(arms, sweeps)
    for a in arms:
        s = pool(by_arm[a])
        s["arm"] = a
        hashes = []
        for r in by_arm[a]:
            if r["arm_hash"] and r["arm_hash"] not in hashes:
                hashes.append(r["arm_hash"])
        s["arm_hashes"] = hashes
        s["tokens_per_week"] = tokens_per_week(s["native_output_tokens"], s["decode_seconds"])
        rep["arms"].append(s)
    base = next(a for a in rep["arms"] if a["arm"] == rep["baseline"])
    for a in rep["arms"]:
        a["decode_tps_gain_percent"] = a["task_output_tps_gain_percent"] = None
        if a["arm"] != rep["baseline"]:
            a["decode_tps_gain_percent"] = gain(a["decode_tps"], base["decode_tps"])
            a["task_output_tps_gain_percent"] = gain(a["task_output_tps"], base["task_output_tps"])
    cases = sorted({r["case"] for r in rows}, key=lambda c: c.encode())
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
        t = transitions(rep["baseline"], a, by_arm[rep["baseline"]], by_arm[a])
        ratio = ratio_interval(rep["baseline"], a, by_arm[rep["baseline"]], by_arm[a], cases)
        rep["comparisons"].append({"baseline": rep["baseline"], "candidate": a, "functional": t["functional"],
                                   "delivered": t["delivered"], "decode_tps_ratio": ratio})
        rep["notes"] += [t["functional"]["words"], t["delivered"]["words"], ratio["words"]]
    for a in rep["arms"]:
        a["decode_tps_interval"] = speed_interval(by_arm[a["arm"]], cases, "decode_seconds")
        a["task_output_tps_interval"] = speed_interval(by_arm[a["arm"]], cases, "task_seconds")
    sw = sweep_reports(rep["arms"], sweeps)
    if sw:
        rep["sweeps"] = sw
    lc = long_context(arms, by_arm)
    if lc:
        rep["long_context"] = lc
    claims = agent_claim_sums(rows)
    for a in rep["arms"]:
        s = claims.get(a["arm"])
        if s is not None:
            a["agent_usage"] = {"attempts": s["n"], "agent_claimed_tokens": s["claim"], "server_counted_tokens": s["counted"],
                                "divergence_percent": claim_divergence(s)}
    am = agent_matrix(rep["arms"], setups, rows)
    if am is not None:
        rep["agent_matrix"] = am
    for a in rep["arms"]:
        reps, notes = replica_speeds(a["arm"], by_arm[a["arm"]], cases)
        if reps is not None:
            a["replicas"] = reps
        rep["notes"] += notes
    for ri in runs:
        if ri["progress"]["state"] != "complete":
            rep["notes"].append("run %s: %s" % (ri["id"], ri["progress"]["words"]))
    rep["notes"] += count_notes(rows) + counter_notes(rows) + agent_notes(rows) + timing_notes(rep["arms"])
    for a in rep["arms"]:
        if a["overlapped"]:
            rep["notes"].append("WARNING: arm %s: %d of %d measured attempts overlapped another attempt on the same device; their decode and task seconds may be contaminated, and so are the arm's speed figures" % (a["arm"], a["overlapped"], a["measured"]))
    rep["notes"] += idle_notes(runs) + schedule_notes(runs)
    return rep


# ---- CSV ------------------------------------------------------------------

def cell(v):
    if v is None:
        return ""
    if isinstance(v, (bool, int, float)):
        return num_text(v)
    return str(v)


def counts_cell(m):
    return ", ".join("%s %d" % (k, m[k]) for k in sorted(m, key=lambda s: s.encode()))


def attempts_table(rows):
    return [ATTEMPT_COLUMNS] + [[cell(r.get(c)) if c in r else "" for c in ATTEMPT_COLUMNS] for r in rows]


def aggregates_table(rep):
    mixed = "; ".join(rep["mixed"])
    cmp = {c["candidate"]: c for c in rep["comparisons"]}

    def stats(s):
        out = [s["attempts"], s["completed"], s["scored"], s["ungraded"], s["unscored"], s["pending"],
               counts_cell(s["states"]), counts_cell(s["replaced"])]
        for k in ("functional", "delivered"):
            out += [s[k]["count"], s[k]["rate"], s[k]["wilson_low"], s[k]["wilson_high"]]
        return out + [s["measured"], s["unmeasured"], s["overlapped"], s["native_output_tokens"], s["decode_seconds"],
                      s["task_seconds"], s["decode_tps"], s["timings_source"] or "", s["task_output_tps"],
                      s["median_attempt_seconds"], counts_cell(s["terminations"]), s["draft_tokens"],
                      s["draft_accepted"], s["draft_acceptance"]]
    table = [AGG_COLUMNS]
    for a in rep["arms"]:
        row = ["arm", a["arm"], ""] + stats(a) + [a["decode_tps_gain_percent"], a["task_output_tps_gain_percent"],
                                                   a["tokens_per_week"], rep["baseline"]]
        c = cmp.get(a["arm"])
        if c:
            for k in ("functional", "delivered"):
                t = c[k]
                row += [t["pairs"], t["both_pass"], t["both_fail"], t["candidate_improves"], t["candidate_regresses"],
                        t["unpaired"], t["mcnemar_exact_p"]]
            x = c["decode_tps_ratio"]
            row += [x["ratio"], x["low"], x["high"], x["cases"], x["resamples"]]
        else:
            row += [None] * 19
        table.append([cell(v) for v in row + [mixed, ""]])
    for cr in rep["cases"]:
        for s in cr["arms"]:
            table.append([cell(v) for v in ["case", s["arm"], cr["case"]] + stats(s) + [None] * 23 + [mixed, ""]])
    for entry in rep.get("legend") or []:
        row = [""] * len(AGG_COLUMNS)
        row[0], row[1], row[-1] = "legend", cell(entry.get("term")), cell(entry.get("meaning"))
        table.append(row)
    return table


def compare_csv(file, text, want):
    got = list(csv.reader(io.StringIO(text, newline="")))
    for i, (w, g) in enumerate(zip(want, got)):
        for j, (a, b) in enumerate(zip(w, g)):
            if a != b:
                fail(file, "line %d, column %s" % (i + 1, want[0][j] if j < len(want[0]) else j), a, b)
        if len(w) != len(g):
            fail(file, "line %d" % (i + 1), "%d fields" % len(w), "%d fields" % len(g))
    if len(want) != len(got):
        fail(file, "lines", len(want), len(got))


# ---- the export -------------------------------------------------------------

def read_sums(d):
    try:
        sums = open(os.path.join(d, "SHA256SUMS"), "rb").read().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail("SHA256SUMS", "(file)", "a readable file", str(e))
        raise Fail()
    data = {}
    for n, line in enumerate(sums[:-1].split("\n") if sums.endswith("\n") else sums.split("\n")):
        m = re.fullmatch(r"([0-9a-f]{64}) [ *](.+)", line)
        if not m or os.path.basename(m.group(2)) != m.group(2) or m.group(2) == "SHA256SUMS":
            fail("SHA256SUMS", "line %d" % (n + 1), "SHA256  FILE", line)
            raise Fail()
        name = m.group(2)
        try:
            b = open(os.path.join(d, name), "rb").read()
        except OSError as e:
            fail(name, "sha256", m.group(1), "unreadable file: %s" % e)
            raise Fail()
        got = hashlib.sha256(b).hexdigest()
        if got != m.group(1):
            fail(name, "sha256", m.group(1), got)
            raise Fail()
        data[name] = b
    for name in FILES:
        if name not in data:
            fail("SHA256SUMS", name, "a checksum line", "none")
    for name in sorted(os.listdir(d)):
        if name not in data and name != "SHA256SUMS":
            fail(name, "(file)", "only the files SHA256SUMS lists", "a file it does not list")
    for name in sorted(data):
        if name not in FILES:
            fail("SHA256SUMS", name, "only the files of an export (%s)" % ", ".join(FILES), "a checksum of another file")
    if failures:
        raise Fail()
    return data


def check_protocol(proto):
    if not conform("protocol.json", "", proto, PROTOCOL):
        raise Fail()
    if proto["schema"] != PROTOCOL_SCHEMA:
        fail("protocol.json", "schema", PROTOCOL_SCHEMA, proto["schema"])
        raise Fail()
    runs, timelines, sweeps, setups = [], {}, [], []
    for i, pr in enumerate(proto["runs"]):
        at = "runs[%d]." % i
        try:
            run = json.loads(pr["run_file"])
            plan = json.loads(pr["plan_file"])
        except ValueError as e:
            fail("protocol.json", at + "run_file", "a run.json and a plan.json", str(e))
            raise Fail()
        if not isinstance(run, dict) or not isinstance(plan, dict):
            fail("protocol.json", at + "run_file", "a run.json and a plan.json", "another value")
            raise Fail()
        for field, text in (("run_file_sha256", pr["run_file"]), ("plan_file_sha256", pr["plan_file"])):
            got = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
            if got != pr[field]:
                fail("protocol.json", at + field, got, pr[field])
        if pr["run_id"] != run.get("id"):
            fail("protocol.json", at + "run_id", run.get("id"), pr["run_id"])
        want = pr["plan_file_sha256"] == run.get("plan_sha256")
        if want != pr["plan_matches_run"]:
            fail("protocol.json", at + "plan_matches_run", want, pr["plan_matches_run"])
        if pr["runner"] not in ("active", "none"):
            fail("protocol.json", at + "runner", '"active" or "none"', pr["runner"])
        runs.append(run_info(run, proto["options"]["suite"], pr["runner"]))
        if pr["timeline"] is not None:
            timelines[run.get("id")] = pr["timeline"]
        sweeps += plan.get("sweeps") or []
        setups += [setup_of(a) for a in plan.get("arms") or []]
    if failures:
        raise Fail()
    return runs, timelines, sweeps, setups


def check(d):
    data = read_sums(d)
    me = open(os.path.abspath(__file__), "rb").read()
    if data["check.py"] != me:
        fail("check.py", "(bytes)", "this checker (run a copy you trust against the export)", "a different file")
        raise Fail()
    rows = loads("attempts.json", data["attempts.json"])
    agg = loads("aggregates.json", data["aggregates.json"])
    proto = loads("protocol.json", data["protocol.json"])
    if failures or not conform("attempts.json", "", rows, [ROW]):
        raise Fail()
    for i, r in enumerate(rows):
        o = check_row(i, r)
        if o is None:
            continue
        for k, v in zip(("status", "functional", "delivered"), o):
            if not same(r[k], v):
                fail("attempts.json", "[%d] (attempt %s).%s" % (i, r["attempt_id"], k), "%s (from the evidence)" % show(v), r[k])
    try:
        compare_csv("attempts.csv", data["attempts.csv"].decode("utf-8"), attempts_table(rows))
    except (UnicodeDecodeError, csv.Error) as e:
        fail("attempts.csv", "(document)", "valid CSV", str(e))
    if failures:
        raise Fail()
    runs, timelines, sweeps, setups = check_protocol(proto)
    if not isinstance(agg, dict) or not same(agg.get("options"), proto["options"]):
        fail("aggregates.json", "options", proto["options"], agg.get("options") if isinstance(agg, dict) else agg)
        raise Fail()
    rep = rebuild(runs, timelines, rows, proto["options"], sweeps, setups)
    legend = agg.get("legend")
    if isinstance(legend, list) and all(isinstance(e, dict) and set(e) == {"term", "meaning"} and
                                        isinstance(e["term"], str) and isinstance(e["meaning"], str) for e in legend):
        text = "".join(e["term"] + "\0" + e["meaning"] + "\n" for e in legend)
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == LEGEND_SHA256:
            rep["legend"] = legend
    if "legend" not in rep:
        fail("aggregates.json", "legend", "the legend evalctl writes (SHA-256 %s)" % LEGEND_SHA256, legend)
        raise Fail()
    compare("aggregates.json", "", rep, agg)
    try:
        compare_csv("aggregates.csv", data["aggregates.csv"].decode("utf-8"), aggregates_table(rep))
    except (UnicodeDecodeError, csv.Error) as e:
        fail("aggregates.csv", "(document)", "valid CSV", str(e))


def main(dirs):
    bad = False
    for d in dirs:
        del failures[:]
        try:
            check(d)
        except Fail:
            pass
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, ZeroDivisionError) as e:
            failures.append("FAIL: %s: not an export this checker can read: %s: %s" % (d, type(e).__name__, e))
        if failures:
            bad = True
            print("\n".join(failures))
            print("FAILED: %s: %d difference(s)" % (d, len(failures)))
        else:
            print("OK: %s: checksums match, every outcome recomputes from its evidence and every aggregate from the attempts" % d)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or [os.path.dirname(os.path.abspath(__file__))]))

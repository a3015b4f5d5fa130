#!/usr/bin/env python3
"""Load test of a running `eventkv serve` (loopback only, bounded in requests and time).

Sessions chat concurrently through /v1/chat/completions (user = the session id,
greedy); afterwards every acknowledged user message and reply must be among the
session's events. Prints p50/p99 latency, aggregate decode tokens/s, the decode
speedup of 8 concurrent sessions over one (end to end, and of the server's
decode steps alone, from /metrics; the 1-session and 8-session phases
alternate over --speedup-rounds rounds, so that a drifting machine weighs on
both alike), and a JSON summary line. Exits 1 on a failed request or a lost
event.

  load_test.py --url http://127.0.0.1:8080 --key KEY --sessions 16 --turns 20
"""
import argparse
import json
import os
import sys
import threading
import time
import urllib.parse

import requests


class Gate:
    """Lets requests through while open; counts the ones in flight, so that a test
    can close it, kill the server and know when no request is left to finish."""

    def __init__(self):
        self.cond = threading.Condition()
        self.is_open, self.busy = True, 0

    def enter(self):
        with self.cond:
            self.cond.wait_for(lambda: self.is_open)
            self.busy += 1

    def leave(self):
        with self.cond:
            self.busy -= 1
            self.cond.notify_all()

    def close(self):
        with self.cond:
            self.is_open = False

    def open(self):
        with self.cond:
            self.is_open = True
            self.cond.notify_all()

    def wait_idle(self, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: self.busy == 0, timeout)


class Chatter:
    """One session chatting turn by turn; keeps what the server acknowledged."""

    def __init__(self, url, key, sid, budget, max_tokens, deadline, gate=None):
        self.url, self.sid, self.max_tokens, self.deadline = url, sid, max_tokens, deadline
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {key}"
        self.budget = budget
        self.gate = gate or Gate()
        self.messages = []  # the acknowledged conversation
        self.latencies, self.failures, self.completion_tokens = [], [], 0

    def create(self):
        r = self.http.post(self.url + "/sessions", json={"id": self.sid,
                                                          "kv_budget": self.budget}, timeout=60)
        if r.status_code != 201:
            raise RuntimeError(f"POST /sessions {self.sid}: {r.status_code} {r.text[:300]}")

    def turn(self, i):
        """One request; True when the server acknowledged it."""
        self.gate.enter()
        try:
            return self._turn(i)
        finally:
            self.gate.leave()

    def _turn(self, i):
        question = {"role": "user",
                    "content": f"Session {self.sid}, turn {i}: tell me a short story about "
                               f"a lighthouse keeper and the number {i * 13 % 97}."}
        body = {"model": "eventkv", "messages": self.messages + [question],
                "max_tokens": self.max_tokens, "temperature": 0, "user": self.sid}
        start = time.monotonic()
        try:
            timeout = max(1.0, self.deadline - start)
            r = self.http.post(self.url + "/v1/chat/completions", json=body, timeout=timeout)
            if r.status_code != 200:
                self.failures.append(f"turn {i}: {r.status_code} {r.text[:200]}")
                return False
            out = r.json()
        except (requests.RequestException, ValueError) as e:
            self.failures.append(f"turn {i}: {type(e).__name__}: {e}")
            return False
        self.latencies.append(time.monotonic() - start)
        self.completion_tokens += out["usage"]["completion_tokens"]
        self.messages += [question, {"role": "assistant",
                                     "content": out["choices"][0]["message"]["content"]}]
        return True

    def run(self, turns, retry=False):
        """`turns` acknowledged turns; with retry, a failed turn is tried again
        (after a pause: the server may be restarting) until the deadline."""
        i = 0
        while i < turns and time.monotonic() < self.deadline:
            if self.turn(i):
                i += 1
            elif retry:
                time.sleep(0.2)
            else:
                i += 1

    def lost(self, url=None):
        """The acknowledged messages that are not among the session's events, in order."""
        r = self.http.get(f"{url or self.url}/sessions/{urllib.parse.quote(self.sid)}/events",
                          timeout=60)
        if r.status_code != 200:
            return [f"GET events: {r.status_code} {r.text[:200]}"]
        events = [(e["role"], e["content"]) for e in r.json()["events"]]
        missing, at = [], 0
        for m in self.messages:
            # In order: each acknowledged message after the previous one.
            try:
                at = events.index((m["role"], m["content"]), at) + 1
            except ValueError:
                missing.append(f"{m['role']}: {m['content'][:60]!r}")
        return missing


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def run_concurrently(chatters, turns, retry=False):
    """Runs every chatter in its own thread; returns the wall time."""
    start = time.monotonic()
    threads = [threading.Thread(target=c.run, args=(turns, retry)) for c in chatters]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - start


def make_chatters(args, count, prefix, deadline, gate=None):
    tag = f"{prefix}-{os.getpid()}-{int(time.time())}"
    chatters = [Chatter(args.url, args.key, f"{tag}-{i}", args.budget, args.max_tokens,
                        deadline, gate) for i in range(count)]
    for c in chatters:
        c.create()
    return chatters


def decode_rate(chatters, wall):
    return sum(c.completion_tokens for c in chatters) / wall if wall > 0 else 0.0


def engine_counters(url, key):
    """The server's decode and prefill counters (GET /metrics)."""
    r = requests.get(url + "/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=60)
    r.raise_for_status()
    names = ("eventkv_decode_tokens_total", "eventkv_decode_seconds_total",
             "eventkv_decode_steps_total", "eventkv_prefill_tokens_total",
             "eventkv_prefill_seconds_total")
    values = dict(line.split() for line in r.text.splitlines()
                  if line.split(" ")[0] in names)
    return {name: float(values[name]) for name in names}


def timed_run(args, chatters):
    """Runs the chatters; returns their completion tokens, the wall time and
    the server's counters over the run (/metrics): decode tokens, steps and
    seconds (decode time only: what batching the sessions' steps gives), and
    prefill seconds."""
    before = engine_counters(args.url, args.key)
    wall = run_concurrently(chatters, args.speedup_turns)
    after = engine_counters(args.url, args.key)
    totals = {name: after[name] - before[name] for name in after}
    totals["completion_tokens"] = sum(c.completion_tokens for c in chatters)
    totals["wall"] = wall
    return totals


def phase_rates(runs):
    """Rates over a phase's runs, summed: end-to-end and decode-step
    tokens/s, the decode and prefill shares of the wall, replies per step."""
    total = {name: sum(run[name] for run in runs) for name in runs[0]}
    seconds, wall = total["eventkv_decode_seconds_total"], total["wall"]
    steps = total["eventkv_decode_steps_total"]
    return {"end_to_end": total["completion_tokens"] / wall if wall else 0.0,
            "decode_steps": total["eventkv_decode_tokens_total"] / seconds if seconds else 0.0,
            "decode_share": seconds / wall if wall else 0.0,
            "prefill_share": total["eventkv_prefill_seconds_total"] / wall if wall else 0.0,
            "replies_per_step": total["eventkv_decode_tokens_total"] / steps if steps else 0.0}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True)
    p.add_argument("--key", default=os.environ.get("EVENTKV_API_KEY", ""))
    p.add_argument("--sessions", type=int, default=16)
    p.add_argument("--turns", type=int, default=20)
    p.add_argument("--budget", type=int, default=256, help="each session's kv_budget (rows)")
    p.add_argument("--max-tokens", type=int, default=16)
    p.add_argument("--timeout-s", type=float, default=600, help="the whole run's limit")
    p.add_argument("--speedup-turns", type=int, default=4,
                   help="turns of the 1-session and 8-session decode rate runs (0: skip)")
    p.add_argument("--speedup-rounds", type=int, default=2,
                   help="alternating rounds of the 1-session and 8-session runs")
    args = p.parse_args(argv)
    host = urllib.parse.urlparse(args.url).hostname
    if host not in ("localhost", "::1") and not host.startswith("127."):
        p.error("--url must be a loopback address")
    deadline = time.monotonic() + args.timeout_s

    chatters = make_chatters(args, args.sessions, "load", deadline)
    wall = run_concurrently(chatters, args.turns)
    latencies = [x for c in chatters for x in c.latencies]
    failures = [f"{c.sid} {f}" for c in chatters for f in c.failures]
    lost = [f"{c.sid} {m}" for c in chatters for m in c.lost()]
    if time.monotonic() > deadline:
        failures.append(f"ran over --timeout-s {args.timeout_s}")

    summary = {"sessions": args.sessions, "turns": args.turns,
               "requests": len(latencies) + len(failures), "failed": len(failures),
               "lost_events": len(lost), "p50_s": round(percentile(latencies, 50), 4),
               "p99_s": round(percentile(latencies, 99), 4),
               "decode_tokens_per_s": round(decode_rate(chatters, wall), 2),
               "wall_s": round(wall, 2)}

    if args.speedup_turns > 0 and not failures:
        solo_runs, octet_runs = [], []
        for _ in range(max(1, args.speedup_rounds)):
            one = make_chatters(args, 1, "solo", deadline)
            solo_runs.append(timed_run(args, one))
            eight = make_chatters(args, 8, "octet", deadline)
            octet_runs.append(timed_run(args, eight))
            failures += [f"{c.sid} {f}" for c in one + eight for f in c.failures]
        solo, octet = phase_rates(solo_runs), phase_rates(octet_runs)

        def ratio(key):
            return round(octet[key] / solo[key], 2) if solo[key] else 0

        def round_ratios(key):
            ratios = []
            for one_run, eight_run in zip(solo_runs, octet_runs):
                base = phase_rates([one_run])[key]
                ratios.append(round(phase_rates([eight_run])[key] / base, 2) if base else 0)
            return ratios

        summary.update({"single_session_decode_tokens_per_s": round(solo["end_to_end"], 2),
                        "eight_sessions_decode_tokens_per_s": round(octet["end_to_end"], 2),
                        "speedup_8_over_1": ratio("end_to_end"),
                        "single_session_decode_step_tokens_per_s": round(solo["decode_steps"], 2),
                        "eight_sessions_decode_step_tokens_per_s": round(octet["decode_steps"], 2),
                        "decode_step_speedup_8_over_1": ratio("decode_steps"),
                        "speedup_rounds": len(solo_runs),
                        "speedup_8_over_1_by_round": round_ratios("end_to_end"),
                        "decode_step_speedup_8_over_1_by_round": round_ratios("decode_steps"),
                        "eight_sessions_decode_share": round(octet["decode_share"], 3),
                        "eight_sessions_prefill_share": round(octet["prefill_share"], 3),
                        "eight_sessions_replies_per_step": round(octet["replies_per_step"], 2),
                        "speedup_target": 3.0})
        summary["failed"] = len(failures)

    for line in (failures + lost)[:50]:
        print("FAIL", line)
    print(f"latency p50 {summary['p50_s']:.3f} s, p99 {summary['p99_s']:.3f} s; "
          f"decode {summary['decode_tokens_per_s']:.1f} tokens/s over {args.sessions} sessions")
    if "speedup_8_over_1" in summary:
        print(f"decode: 1 session {summary['single_session_decode_tokens_per_s']:.1f} tokens/s, "
              f"8 sessions {summary['eight_sessions_decode_tokens_per_s']:.1f} tokens/s, "
              f"speedup {summary['speedup_8_over_1']:.2f}x (target >= 3x)")
        print(f"decode steps alone: 1 session {summary['single_session_decode_step_tokens_per_s']:.1f}"
              f" tokens/s, 8 sessions {summary['eight_sessions_decode_step_tokens_per_s']:.1f}"
              f" tokens/s, speedup {summary['decode_step_speedup_8_over_1']:.2f}x; with 8 sessions"
              f" the server spent {100 * summary['eight_sessions_decode_share']:.0f}% of the wall"
              f" decoding, {100 * summary['eight_sessions_prefill_share']:.0f}% prefilling,"
              f" {summary['eight_sessions_replies_per_step']:.1f} replies a step")
        print(f"over {summary['speedup_rounds']} alternating rounds; by round: end to end"
              f" {summary['speedup_8_over_1_by_round']}, decode steps"
              f" {summary['decode_step_speedup_8_over_1_by_round']}")
    print(json.dumps(summary))
    return 1 if failures or lost else 0


if __name__ == "__main__":
    sys.exit(main())

# A small concurrent load (load_test.py's clients) with the server killed (SIGKILL)
# mid-run and restarted on its state dir: no acknowledged event may be lost.
import threading
import time
from types import SimpleNamespace

import load_test
from conftest import KEY

SESSIONS, TURNS = 4, 5


def acknowledged_turns(chatters):
    return sum(len(c.messages) // 2 for c in chatters)


def test_kill_restart_loses_no_acknowledged_event(fresh_server):
    server = fresh_server()
    args = SimpleNamespace(url=server.url, key=KEY, budget=256, max_tokens=8)
    deadline = time.monotonic() + 180
    gate = load_test.Gate()
    chatters = load_test.make_chatters(args, SESSIONS, "kill", deadline, gate)
    threads = [threading.Thread(target=c.run, args=(TURNS, True)) for c in chatters]
    for t in threads:
        t.start()
    try:
        while acknowledged_turns(chatters) < SESSIONS + 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        # Kill while requests are in flight; the gate holds back new ones.
        gate.close()
        server.kill()
        assert gate.wait_idle(60)
        # Checked before any client resends its history (which would hide a loss).
        server.start()
        for c in chatters:
            assert c.lost() == [], c.sid
    finally:
        gate.open()
        for t in threads:
            t.join()
    assert all(len(c.messages) == 2 * TURNS for c in chatters), [c.failures for c in chatters]
    for c in chatters:
        assert c.lost() == [], c.sid
        # The only failures are the requests the kill cut off (connection errors).
        assert all("Error" in f for f in c.failures), c.failures


def test_load_script_small_run(server):
    # The standalone script end to end, small: 3 sessions x 2 turns, no speedup runs.
    assert load_test.main(["--url", server.url, "--key", KEY, "--sessions", "3",
                           "--turns", "2", "--budget", "128", "--max-tokens", "4",
                           "--timeout-s", "120", "--speedup-turns", "0"]) == 0

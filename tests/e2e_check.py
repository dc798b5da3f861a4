"""e2e_check.py - the verdict bookkeeping of the end-to-end test scripts.

check(cond, what) prints "ok: what" or "FAIL: what" and counts it;
summary() prints the totals and returns the script's exit status (1 when
anything failed). Shared by tests/e2e_crawl.py, e2e_hostile.py and
e2e_state.py.
"""
passes = failures = 0


def check(cond, what):
    global passes, failures
    if cond:
        passes += 1
        print("ok:", what, flush=True)
    else:
        failures += 1
        print("FAIL:", what, flush=True)
    return cond


def summary():
    print("%d passed, %d failed" % (passes, failures))
    return 1 if failures else 0

# Schemathesis hooks of test_schema.py (loaded through SCHEMATHESIS_HOOKS).
import os
import re
import zlib

import schemathesis

SID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Sessions test_schema.py made, with events: random ids would only ever reach
# the 404 path of the session routes.
SEEDED = [s for s in os.environ.get("EVENTKV_SCHEMA_SESSIONS", "").split(",") if s]


@schemathesis.hook
def before_call(context, case, kwargs):
    # The schema's real limit is 4096 tokens; generating that many per case would
    # take minutes on two cores, so valid values are capped (still valid).
    if isinstance(case.body, dict):
        for field in ("max_tokens", "max_completion_tokens"):
            value = case.body.get(field)
            if type(value) is int and 4 < value <= 4096:
                case.body[field] = 4
    # Most valid session ids become a seeded session (chosen by the id's hash, so
    # a case replays the same); DELETE keeps its own so the seeded ones live on.
    params = case.path_parameters or {}
    sid = params.get("sid")
    if SEEDED and case.method.upper() != "DELETE" and isinstance(sid, str) and \
            SID.fullmatch(sid):
        pick = zlib.crc32(sid.encode()) % (len(SEEDED) + 1)
        if pick < len(SEEDED):
            params["sid"] = SEEDED[pick]

# Schemathesis hooks of test_schema.py (loaded through SCHEMATHESIS_HOOKS).
import schemathesis


@schemathesis.hook
def before_call(context, case, kwargs):
    # The schema's real limit is 4096 tokens; generating that many per case would
    # take minutes on two cores, so valid values are capped (still valid).
    if isinstance(case.body, dict):
        for field in ("max_tokens", "max_completion_tokens"):
            value = case.body.get(field)
            if type(value) is int and 4 < value <= 4096:
                case.body[field] = 4

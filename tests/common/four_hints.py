"""The directory scan's rule, shared by the example tests: every tool in a
tools/list carries all four hints explicitly, as booleans (OpenAI's app
directory rejects a tool that leaves one to the protocol's defaults)."""

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def problems(tools, who):
    """Returns a list of messages, one per tool and hint the scan rejects."""
    out = []
    for t in tools:
        ann = t.get("annotations")
        name = t.get("name", "?")
        if not isinstance(ann, dict):
            out.append("%s: %s has no annotations" % (who, name))
            continue
        for h in HINTS:
            if not isinstance(ann.get(h), bool):
                out.append("%s: %s: %s is %r, want an explicit boolean"
                           % (who, name, h, ann.get(h)))
        if ann.get("readOnlyHint") is True and (
                ann.get("destructiveHint") is not False
                or ann.get("idempotentHint") is not True):
            out.append("%s: %s: read-only but destructiveHint %r, "
                       "idempotentHint %r" % (who, name,
                                              ann.get("destructiveHint"),
                                              ann.get("idempotentHint")))
    return out

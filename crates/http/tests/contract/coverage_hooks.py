"""Hooks of schemathesis' coverage phase (`cargo xtask contract`).

The coverage phase sends each string field at its `maxLength` and one past it. An input field
takes a `data:` URI of up to 6 MiB that must match a pattern, and producing even 64 KiB that
match a regular expression takes hypothesis many minutes. For this phase only, a `maxLength`
of a field with a `pattern` is read as at most 1 KiB, and any other as at most 64 KiB; the real
limits are tested at their size by the Rust suite (the bounded-jobs and hostile-input tests).
"""

import schemathesis

# The hooks of every run apply here too.
import contract_hooks  # noqa: F401

MAX_LENGTH = 64 * 1024
MAX_PATTERNED_LENGTH = 1024


def _cap(node):
    if isinstance(node, dict):
        length = node.get("maxLength")
        cap = MAX_PATTERNED_LENGTH if "pattern" in node else MAX_LENGTH
        if isinstance(length, int) and length > cap:
            node["maxLength"] = cap
        for value in node.values():
            _cap(value)
    elif isinstance(node, list):
        for value in node:
            _cap(value)


@schemathesis.hook
def before_load_schema(context, raw_schema):
    _cap(raw_schema)

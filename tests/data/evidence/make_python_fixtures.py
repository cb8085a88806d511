"""Make the Python-side fixtures verity's evidence tests compare against.

Everything here is computed by CPython's own json module, exactly as
mcp-evidence-validator computes it:
  json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
so the tests prove interoperability against Python's real output, not
against verity's idea of it.

Writes (beside this script):
  mev-0.3-ledger.json   a hand-made mcp-evidence-validator 0.3 ledger
                        (json.dump(indent=2), as that tool writes it)
  mev-0.3-ledger.head   its head
  python-canonical.json inputs and Python's canonical form of each
  python-floats.json    random doubles as Python's repr prints them

Run: python3 tests/data/evidence/make_python_fixtures.py
"""

import hashlib
import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
GENESIS = "sha256:" + "0" * 64


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def block_hash(prev, rtype, record):
    body = canonical({"type": rtype, "record": record})
    return "sha256:" + hashlib.sha256((prev + body).encode("utf-8")).hexdigest()


RECORDS = [
    ("declaration", {
        "server": "café-notes",
        "contract_recipe": "2",
        "tools": [{
            "name": "add_note",
            "description": "Ajoute une note — 笔记 🎉",
            "input_schema": {"type": "object", "properties": {
                "text": {"type": "string", "maxLength": 1000},
                "weight": {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5},
            }},
            "permissions": ["write:notes"],
            "output_schema": {},
            "annotations": {"readOnlyHint": False, "idempotentHint": False},
        }],
    }),
    ("observation_batch", {
        "observations": [{
            "index": 1, "tool": "add_note",
            "args": {"text": "tab\there \"quoted\" back\\slash\u0001 \u2028 \u007f",
                     "weight": 1.0},
            "contract_recipe": "2",
        }],
        "floats": [1.0, -0.0, 0.0, 2.5, 1e-05, 0.0001, 1e16, 1e15, 1e22, 123456789.125,
                   0.1 + 0.2, 5e-324, 1.7976931348623157e308, -1.5e-7, 100.0],
        "ints": [0, -1, 9007199254740993, 123456789012345678901234567890, -(2 ** 70)],
    }),
    ("report", {
        "summary": {"declared_tools": 1, "observations": 1, "findings": 0,
                    "contract_recipes": ["2"]},
        "keys": {"\uffff": 1, "\U0001F600": 2, "a": 3, "é": 4, "Z": 5, "": 6},
        "findings": [],
    }),
]


def ledger():
    blocks = []
    prev = GENESIS
    for i, (rtype, record) in enumerate(RECORDS):
        h = block_hash(prev, rtype, record)
        blocks.append({"index": i, "prev_hash": prev, "type": rtype, "record": record, "hash": h})
        prev = h
    with open(os.path.join(HERE, "mev-0.3-ledger.json"), "w", encoding="utf-8") as fh:
        json.dump({"ledger": "mcp-evidence-validator", "version": "0.3", "blocks": blocks}, fh,
                  indent=2)
        fh.write("\n")  # the only byte deno fmt would add
    with open(os.path.join(HERE, "mev-0.3-ledger.head"), "w", encoding="utf-8") as fh:
        fh.write(prev + "\n")


def canonical_cases():
    cases = [value for _, value in RECORDS]
    cases += [
        {"b": 1, "a": [True, False, None], "c": {"y": "", "x": []}},
        ["\u0000\u001f\b\f\n\r\t\"\\/", "ünïcödé", "\U0001F389"],
        {"\ud7ff": 0, "\ue000": 1, "\U00010000": 2, "\uffff": 3},
        [1.0, 1, 1.5, 1e100, 1e-100, 12345678901234567890, 1e21, 1e20],
    ]
    out = []
    for c in cases:
        # The text Python itself reads back (json.dumps default), and its canonical form.
        out.append({"text": json.dumps(c, indent=1), "canonical": canonical(c),
                    "sha256": hashlib.sha256(canonical(c).encode("utf-8")).hexdigest()})
    with open(os.path.join(HERE, "python-canonical.json"), "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


def floats():
    rng = random.Random(8)
    vals = []
    for _ in range(3000):
        bits = rng.getrandbits(64)
        v = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if v != v or v in (float("inf"), float("-inf")):
            continue
        vals.append(v)
    for _ in range(1000):
        vals.append(rng.uniform(-1e6, 1e6))
        vals.append(round(rng.uniform(-1000, 1000), rng.randint(0, 6)))
        vals.append(float(rng.randint(-10 ** 17, 10 ** 17)))
        vals.append(rng.random() * 10 ** rng.randint(-30, 30))
    vals += [0.0, -0.0, 1.0, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 0.1, 5e-324,
             2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e22, 123e18]
    # Each float as a hex bit pattern (exact) and as Python's repr.
    rows = [[struct.pack(">d", v).hex(), repr(v)] for v in vals]
    with open(os.path.join(HERE, "python-floats.json"), "w", encoding="utf-8") as fh:
        # One row per line, the layout deno fmt keeps.
        fh.write("[\n" + ",\n".join(f'  ["{h}", "{r}"]' for h, r in rows) + "\n]\n")


if __name__ == "__main__":
    ledger()
    canonical_cases()
    floats()

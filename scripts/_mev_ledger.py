"""Write or verify a ledger in mcp-evidence-validator 0.3's layout, the way
that tool does (it is not installable here: no PyPI). Used by
scripts/bench_ledger.ts as the Python side of the comparison.

  python3 scripts/_mev_ledger.py write N PATH   -> prints the head
  python3 scripts/_mev_ledger.py verify PATH HEAD -> prints "ok <ms>" (load + replay)

Hashing: sha256(prev_hash + json.dumps({"type", "record"}, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)), as the tool computes it; the
file is written with json.dump(indent=2) (ensure_ascii escapes), as it
writes it. verify replays the chain, checks every index, prev_hash and hash
and compares the head, and collects the contract recipes the records state.
"""

import hashlib
import json
import sys
import time

GENESIS = "sha256:" + "0" * 64


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def block_hash(prev, rtype, record):
    body = canonical({"type": rtype, "record": record})
    return "sha256:" + hashlib.sha256((prev + body).encode("utf-8")).hexdigest()


def record(i):
    hexd = hashlib.sha256(str(i).encode()).hexdigest()
    return {
        "run_id": "2026-11-30T00-00-00Z-%06x" % i,
        "report": "runs/%d/report.json" % i,
        "digest": "sha256:" + hexd,
        "target": "fixtures/honest-readonly",
        "verdicts": {"PASS": 3, "VIOLATION": 1 if i % 7 == 0 else 0, "INCONCLUSIVE": 1},
        "harness": {"version": "0.1.0", "deno": "2.9.6"},
        "contract_recipe": "2",
    }


def write(n, path):
    prev = GENESIS
    blocks = []
    for i in range(n):
        rec = record(i)
        h = block_hash(prev, "report", rec)
        blocks.append({"index": i, "prev_hash": prev, "type": "report", "record": rec, "hash": h})
        prev = h
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"ledger": "mcp-evidence-validator", "version": "0.3", "blocks": blocks}, f,
                  indent=2)
    print(prev)


def verify(path, head):
    t = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    prev = GENESIS
    recipes = set()
    ok = doc.get("ledger") == "mcp-evidence-validator"
    for i, b in enumerate(doc["blocks"]):
        if b["index"] != i or b["prev_hash"] != prev:
            ok = False
        h = block_hash(prev, b["type"], b["record"])
        if h != b["hash"]:
            ok = False
        r = b["record"].get("contract_recipe")
        if isinstance(r, str):
            recipes.add(r)
        prev = h
    ok = ok and prev == head
    ms = (time.perf_counter() - t) * 1000
    print(("ok" if ok else "REFUSED") + " %.1f" % ms)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(int(sys.argv[2]), sys.argv[3])
    else:
        verify(sys.argv[2], sys.argv[3])

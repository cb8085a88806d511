import assert from "node:assert/strict";
import { canonicalJson, parsePythonJson } from "./canonical.ts";
import {
  type Block,
  blockBody,
  chainBlocks,
  chainHash,
  GENESIS,
  ledgerRecipesText,
  ledgerText,
  verifyLedger,
  verifyLedgerText,
} from "./chain.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);
const PY_TEXT = Deno.readTextFileSync(new URL("mev-0.3-ledger.json", DATA));
const PY_HEAD = Deno.readTextFileSync(new URL("mev-0.3-ledger.head", DATA))
  .trim();

interface Ledger {
  ledger: string;
  version: string;
  blocks: Block[];
}

/** A verity ledger of `n` small report blocks, parsed back from its text. */
function verityLedger(n: number): { ledger: Ledger; head: string } {
  const entries = Array.from({ length: n }, (_, i) => ({
    type: i === 0 ? "declaration" : "report",
    record: {
      i,
      digest: `sha256:${String(i).padStart(64, "0")}`,
      ratio: i + 0.5,
      note: "é",
    },
  }));
  const { lines, head } = chainBlocks(GENESIS, 0, entries);
  return { ledger: parsePythonJson(ledgerText(lines)) as Ledger, head };
}

/** Re-hash every block from `from` on, as a forger who can edit the file would. */
function replay(l: Ledger, from = 0): void {
  let prev = from === 0 ? GENESIS : l.blocks[from - 1]!.hash;
  for (let i = from; i < l.blocks.length; i++) {
    const b = l.blocks[i]!;
    b.prev_hash = prev;
    b.hash = chainHash(prev, blockBody(b.type, b.record));
    prev = b.hash;
  }
}

const kinds = (l: unknown, head: string) =>
  verifyLedger(l, head).problems.map((p) => `${p.kind}@${p.index}`);

Deno.test("an intact verity ledger verifies against its head, and against nothing else", () => {
  const { ledger, head } = verityLedger(5);
  const v = verifyLedger(ledger, head);
  assert.deepEqual([v.ok, v.blocks, v.head], [true, 5, head]);
  assert.deepEqual(v.types, { declaration: 1, report: 4 });
  assert.equal(verifyLedger(ledger, GENESIS).ok, false);
});

Deno.test("an empty ledger's head is genesis", () => {
  const empty = parsePythonJson(ledgerText([]));
  assert.equal(verifyLedger(empty, GENESIS).ok, true);
  assert.equal(GENESIS, "sha256:" + "0".repeat(64));
});

Deno.test("tamper: an edited record is refused at that block and at the head, without a cascade", () => {
  const { ledger, head } = verityLedger(6);
  (ledger.blocks[2]!.record as Record<string, unknown>).note = "edited";
  assert.deepEqual(kinds(ledger, head), ["hash@2", "head@null"]);
  const v = verifyLedger(ledger, head);
  assert.match(
    v.problems[0]!.message,
    /block 2: hash .* does not match its content/,
  );
});

Deno.test("tamper: a chain replayed over an edit is self-consistent, and refused by the head", () => {
  const { ledger, head } = verityLedger(6);
  (ledger.blocks[2]!.record as Record<string, unknown>).note = "edited";
  replay(ledger, 2);
  assert.deepEqual(kinds(ledger, head), ["head@null"]);
  assert.match(
    verifyLedger(ledger, head).problems[0]!.message,
    /no block carries the expected head/,
  );
  // Verified against its own new head, the forgery would pass: that is why the head is kept elsewhere.
  assert.equal(verifyLedger(ledger, ledger.blocks.at(-1)!.hash).ok, true);
});

Deno.test("tamper: dropping the last block is refused by the head", () => {
  const { ledger, head } = verityLedger(6);
  ledger.blocks.pop();
  assert.deepEqual(kinds(ledger, head), ["head@null"]);
});

Deno.test("tamper: a falsified prev_hash and index are each refused", () => {
  const { ledger, head } = verityLedger(6);
  ledger.blocks[3]!.prev_hash = "sha256:" + "f".repeat(64);
  ledger.blocks[4]!.index = 7;
  assert.deepEqual(kinds(ledger, head), ["prev_hash@3", "index@4"]);
  // A dropped middle block, with later indexes renumbered and the chain replayed, is caught by the head.
  const second = verityLedger(6);
  second.ledger.blocks.splice(2, 1);
  second.ledger.blocks.forEach((b, i) => (b.index = i));
  replay(second.ledger, 2);
  assert.deepEqual(kinds(second.ledger, second.head), ["head@null"]);
});

Deno.test("malformed ledgers are format problems, never crashes", () => {
  const { ledger, head } = verityLedger(3);
  const extra = structuredClone(ledger);
  (extra.blocks[1] as unknown as Record<string, unknown>).note = "unhashed";
  assert.deepEqual(kinds(extra, head), ["format@1", "head@null"]);
  const noRecord = structuredClone(ledger);
  delete (noRecord.blocks[0] as Partial<Block>).record;
  assert.ok(kinds(noRecord, head).includes("format@0"));
  assert.deepEqual(
    kinds({ ledger: "other", version: "1", blocks: [] }, GENESIS),
    ["format@null"],
  );
  assert.deepEqual(
    kinds({ ledger: "verity", version: "9", blocks: [] }, GENESIS),
    ["format@null"],
  );
  assert.deepEqual(
    kinds({ ledger: "verity", version: "1", blocks: "x" }, GENESIS),
    ["format@null"],
  );
  assert.deepEqual(kinds([1, 2], GENESIS), ["format@null"]);
  assert.deepEqual(
    kinds({ ledger: "verity", version: "1", blocks: [null] }, GENESIS),
    ["format@0", "head@null"],
  );
});

Deno.test("an mcp-evidence-validator 0.3 ledger written by Python verifies, floats and non-ASCII included", () => {
  const ledger = parsePythonJson(PY_TEXT);
  const v = verifyLedger(ledger, PY_HEAD);
  assert.equal(v.ok, true, JSON.stringify(v.problems));
  assert.deepEqual(v.types, {
    declaration: 1,
    observation_batch: 1,
    report: 1,
  });
  assert.deepEqual(ledgerRecipesText(PY_TEXT), ["2"]);
  // Read with plain JSON.parse, 1.0 becomes 1 and the hashes no longer match:
  // the documented reason every ledger is read with parsePythonJson.
  assert.equal(verifyLedger(JSON.parse(PY_TEXT), PY_HEAD).ok, false);
});

Deno.test("the Python ledger refuses the same four forgeries", () => {
  const fresh = () => parsePythonJson(PY_TEXT) as Ledger;
  const edited = fresh();
  (edited.blocks[1]!.record as Record<string, unknown>).floats = [1];
  assert.deepEqual(kinds(edited, PY_HEAD), ["hash@1", "head@null"]);
  const replayed = fresh();
  (replayed.blocks[0]!.record as Record<string, unknown>).server = "evil";
  replay(replayed);
  assert.deepEqual(kinds(replayed, PY_HEAD), ["head@null"]);
  const dropped = fresh();
  dropped.blocks.pop();
  assert.deepEqual(kinds(dropped, PY_HEAD), ["head@null"]);
  const falsified = fresh();
  falsified.blocks[2]!.prev_hash = GENESIS;
  falsified.blocks[2]!.index = 0;
  assert.deepEqual(kinds(falsified, PY_HEAD), ["index@2", "prev_hash@2"]);
});

const python = (() => {
  try {
    return new Deno.Command("python3", {
      args: ["-c", "pass"],
      stdout: "null",
      stderr: "null",
    }).outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name:
    "a verity ledger verifies under Python's own algorithm (live cross-check)",
  ignore: !python,
  async fn() {
    const entries = [
      {
        type: "report",
        record: {
          score: 1.5,
          tiny: 0.00001,
          big: 2 ** 60,
          name: "é 中 😀",
          nested: { z: 1, a: [true, null] },
        },
      },
      { type: "report", record: { n: -0.25, keys: { "\uffff": 1, "😀": 2 } } },
    ];
    const { lines, head } = chainBlocks(GENESIS, 0, entries);
    const p = new Deno.Command("python3", {
      args: [
        "-c",
        `import json,hashlib,sys
led=json.load(sys.stdin)
prev="sha256:"+"0"*64
for b in led["blocks"]:
  body=json.dumps({"type":b["type"],"record":b["record"]},sort_keys=True,separators=(",",":"),ensure_ascii=False)
  h="sha256:"+hashlib.sha256((prev+body).encode("utf-8")).hexdigest()
  assert h==b["hash"], (b["index"], h, b["hash"])
  prev=h
print(prev)`,
      ],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const w = p.stdin.getWriter();
    await w.write(new TextEncoder().encode(ledgerText(lines)));
    await w.close();
    const out = await p.output();
    assert.equal(new TextDecoder().decode(out.stdout).trim(), head);
    assert.equal(
      canonicalJson(entries[1]!.record),
      '{"keys":{"\uffff":1,"😀":2},"n":-0.25}',
    );
  },
});

Deno.test("ledger text with a duplicated key or an extra top-level key is refused, whichever copy a reader keeps", () => {
  const entries = [
    { type: "report", record: { digest: "sha256:" + "1".repeat(64) } },
    { type: "report", record: { digest: "sha256:" + "2".repeat(64) } },
  ];
  const { lines, head } = chainBlocks(GENESIS, 0, entries);
  const text = ledgerText(lines);
  assert.equal(verifyLedgerText(text, head).ok, true);
  // A forged blocks array first, the genuine one last: Python and JSON.parse keep the last.
  const forged = chainBlocks(GENESIS, 0, [entries[1]!]);
  const dupBlocks = text.replace(
    '"blocks":[',
    `"blocks":[${forged.lines[0]}],"blocks":[`,
  );
  const v1 = verifyLedgerText(dupBlocks, head);
  assert.equal(v1.ok, false);
  assert.match(v1.problems[0]!.message, /duplicate key "blocks"/);
  // A record key duplicated: the first copy forged, the last genuine.
  const dupRecord = text.replace(
    '"record":{"digest":"sha256:1',
    `"record":{"digest":"sha256:${"9".repeat(64)}","digest":"sha256:1`,
  );
  const v2 = verifyLedgerText(dupRecord, head);
  assert.equal(v2.ok, false);
  assert.match(
    v2.problems[0]!.message,
    /duplicate key "digest".*\/blocks\/0\/record/,
  );
  // An extra top-level key: covered by no hash.
  const extra = text.replace('{"ledger":', '{"note":"trust me","ledger":');
  const v3 = verifyLedgerText(extra, head);
  assert.equal(v3.ok, false);
  assert.deepEqual(v3.problems.map((p) => p.kind), ["format"]);
  assert.match(v3.problems[0]!.message, /unexpected top-level key "note"/);
});

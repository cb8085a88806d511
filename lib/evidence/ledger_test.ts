import assert from "node:assert/strict";
import { InputError } from "../errors.ts";
import {
  appendBlock,
  appendBlocks,
  GENESIS,
  readLedgerFile,
  verifyLedger,
  verifyLedgerFile,
  walkLedgerFile,
} from "./ledger.ts";
import { join } from "node:path";
import { chainBlocks, ledgerText, verifyLedgerText } from "./chain.ts";
import { parsePythonJson } from "./canonical.ts";

const DATA = new URL("../../tests/data/evidence/", import.meta.url);
const PY_TEXT = Deno.readTextFileSync(new URL("mev-0.3-ledger.json", DATA));
const PY_HEAD = Deno.readTextFileSync(new URL("mev-0.3-ledger.head", DATA))
  .trim();

async function tmp(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "verity-ledger-test-" });
}

Deno.test("appendBlock creates the ledger, chains each block, and returns the head", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  const a = await appendBlock(path, "report", {
    digest: "sha256:" + "1".repeat(64),
    score: 0.75,
  });
  assert.equal(a.index, 0);
  assert.equal(a.hash, a.head);
  const b = await appendBlock(path, "report", {
    digest: "sha256:" + "2".repeat(64),
    note: "réel",
  });
  assert.equal(b.index, 1);
  const doc = await readLedgerFile(path) as {
    ledger: string;
    blocks: { prev_hash: string }[];
  };
  assert.equal(doc.ledger, "verity");
  assert.equal(doc.blocks[0]!.prev_hash, GENESIS);
  assert.equal(doc.blocks[1]!.prev_hash, a.head);
  assert.equal(verifyLedger(doc, b.head).ok, true);
  // One block per line, and no temporary file left behind.
  const text = await Deno.readTextFile(path);
  assert.equal(
    text.split("\n").filter((l) => l.startsWith('{"index":')).length,
    2,
  );
  // No temporary file is left; the lock file stays by design (a kernel
  // flock: unlinking it would let a later writer lock another inode).
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [
    "ledger.json",
    "ledger.json.lock",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("appending refuses a ledger whose own chain does not verify, and leaves it untouched", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  await appendBlocks(path, [{ type: "report", record: { n: 1 } }, {
    type: "report",
    record: { n: 2 },
  }]);
  const tampered = (await Deno.readTextFile(path)).replace(
    '{"n":1}',
    '{"n":9}',
  );
  await Deno.writeTextFile(path, tampered);
  await assert.rejects(
    () => appendBlock(path, "report", { n: 3 }),
    (e: Error) =>
      e instanceof InputError &&
      /own chain does not verify .*block 0: hash/.test(e.message),
  );
  assert.equal(await Deno.readTextFile(path), tampered);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("appending refuses what is not a verity ledger in its own layout: another tool's ledger, bad JSON, a pretty-printed verity ledger", async () => {
  const dir = await tmp();
  const foreign = `${dir}/mev.json`;
  const text =
    '{"ledger":"mcp-evidence-validator","version":"0.3","blocks":[]}';
  await Deno.writeTextFile(foreign, text);
  const refused = (name: string) => (e: Error) =>
    e instanceof InputError &&
    e.message ===
      `${dir}/${name}: not a verity ledger in verity's own layout (a header line, one canonical block per line); verity appends only to its own ledgers`;
  await assert.rejects(
    () => appendBlock(foreign, "report", {}),
    refused("mev.json"),
  );
  assert.equal(await Deno.readTextFile(foreign), text);
  const broken = `${dir}/broken.json`;
  await Deno.writeTextFile(broken, '{"ledger":');
  await assert.rejects(
    () => appendBlock(broken, "report", {}),
    refused("broken.json"),
  );
  // A verity ledger pretty-printed (its chain intact) is not appended to.
  const own = `${dir}/own.json`;
  await appendBlock(own, "report", { n: 1 });
  const pretty = JSON.stringify(await readLedgerFile(own), null, 2);
  await Deno.writeTextFile(own, pretty);
  await assert.rejects(
    () => appendBlock(own, "report", {}),
    refused("own.json"),
  );
  assert.equal(await Deno.readTextFile(own), pretty);
  await assert.rejects(() => appendBlock(`${dir}/x.json`, "", {}), TypeError);
  await assert.rejects(
    () => appendBlock(`${dir}/y.json`, "report", { when: new Date() }),
    /Date at \/when/,
  );
  // Nothing was written beside the refused ledgers but their lock files.
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
      !n.endsWith(".lock")
    ).sort(),
    ["broken.json", "mev.json", "own.json"],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("concurrent appends never lose a block", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  const results = await Promise.all(
    Array.from(
      { length: 12 },
      (_, i) => appendBlock(path, "report", { run: i }),
    ),
  );
  assert.deepEqual(results.map((r) => r.index).sort((a, b) => a - b), [
    ...Array(12).keys(),
  ]);
  const doc = await readLedgerFile(path) as {
    blocks: { record: { run: number } }[];
  };
  const head = results.find((r) => r.index === 11)!.head;
  assert.equal(verifyLedger(doc, head).ok, true);
  assert.deepEqual(doc.blocks.map((b) => b.record.run).sort((a, b) => a - b), [
    ...Array(12).keys(),
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("numbers JavaScript and Python print differently survive a read-and-append round trip", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  // A record holding 1e21 and 1e-7 (printed by Python as 1e+21 and 1e-07).
  await appendBlock(path, "report", { big: 1e21, small: 1e-7, exact: 2 ** 60 });
  const r = await appendBlock(path, "report", { n: 2 });
  assert.equal(verifyLedger(await readLedgerFile(path), r.head).ok, true);
  assert.match(await Deno.readTextFile(path), /"big":1e\+21/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a ledger larger than the read buffer is walked as a stream, appended byte for byte, and an edit deep inside is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-ledger-stream-" });
  const path = join(dir, "ledger.json");
  // ~12,000 blocks of ~520 bytes: more than six 1 MiB reads, so lines cross
  // read boundaries; non-ASCII text puts multi-byte characters across them.
  const entries = Array.from({ length: 12_000 }, (_, i) => ({
    type: "report",
    record: { i, note: `é${"x".repeat(400)}→${i}`, digest: `sha256:${i}` },
  }));
  const first = await appendBlocks(path, entries.slice(0, 11_000));
  const second = await appendBlocks(path, entries.slice(11_000));
  // The same chain written in one go gives the same bytes and head.
  const once = join(dir, "once.json");
  const whole = await appendBlocks(once, entries);
  assert.equal(second.head, whole.head);
  assert.equal(first.count + second.count, 12_000);
  const a = await Deno.readFile(path);
  const b = await Deno.readFile(once);
  assert.ok(a.length > 4 << 20);
  assert.deepEqual(a, b);
  const w = walkLedgerFile(path, null);
  assert.equal(w?.blocks, 12_000);
  assert.equal(w?.head, whole.head);
  const v = await verifyLedgerFile(path, whole.head);
  assert.equal(v.ok, true);
  // One character of block 9,000 changed (still canonical): the line walk
  // names the block, and the ledger no longer chains for an append.
  const text = new TextDecoder().decode(a).replace('→9000"', '→9001"');
  await Deno.writeTextFile(path, text);
  assert.equal(walkLedgerFile(path, null)?.ok, false);
  await assert.rejects(
    () => appendBlock(path, "report", { n: 1 }),
    /own chain does not verify/,
  );
  const bad = await verifyLedgerFile(path, whole.head);
  assert.equal(bad.ok, false);
  assert.ok(
    bad.problems.some((p) => p.index === 9000),
    JSON.stringify(bad.problems[0]),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("ASCII stretches (lines hashed as they stand) and non-ASCII ones (made again) verify alike; a leading BOM is dropped; an edit in either is what verifyLedger finds", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  // ~3,000 lines of ~130 bytes: several 64 KiB reads, blocks 1,000-1,099
  // non-ASCII, so some reads are ASCII and some are not.
  const entries = Array.from({ length: 3000 }, (_, i) => ({
    type: "report",
    record: { i, note: i >= 1000 && i < 1100 ? `é${i}` : `e${i}`, n: [0.5] },
  }));
  const { lines, head } = chainBlocks(GENESIS, 0, entries);
  const text = ledgerText(lines);
  for (const t of [text, "\uFEFF" + text]) {
    await Deno.writeTextFile(path, t);
    assert.equal(walkLedgerFile(path, null)?.head, head);
    assert.equal((await verifyLedgerFile(path, head)).ok, true);
  }
  for (
    const [from, to, at] of [["e2500", "e2501", 2500], [
      "é1050",
      "é1051",
      1050,
    ]] as const
  ) {
    const edited = text.replace(`"${from}"`, `"${to}"`);
    await Deno.writeTextFile(path, edited);
    assert.equal(walkLedgerFile(path, null)?.ok, false);
    const { recipes: _, ...v } = await verifyLedgerFile(path, head);
    assert.deepEqual(v, verifyLedgerText(edited, head));
    assert.deepEqual(v.problems.map((p) => p.index), [at, null]);
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a ledger written from a generator, a block at a time, verifies; a tampered block near its end is found", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  const N = 12_000; // ~5 MB: more than four 1 MiB reads
  let made = 0;
  function* gen() {
    for (let i = 0; i < N; i++) {
      made++;
      yield {
        type: i % 1000 === 0 ? "note" : "report",
        record: { i, digest: `sha256:${i}`, note: `ü${"y".repeat(380)}` },
      };
    }
  }
  const w = await appendBlocks(path, gen());
  assert.equal(made, N);
  assert.deepEqual([w.first, w.count], [0, N]);
  const good = await Deno.readFile(path);
  assert.ok(good.length > 4 << 20);
  const v = await verifyLedgerFile(path, w.head);
  assert.deepEqual([v.ok, v.blocks, v.types], [true, N, {
    note: 12,
    report: N - 12,
  }]);
  const text = new TextDecoder().decode(good);
  const lines = text.split("\n");
  // lines[0] is the header; block i is lines[i + 1].
  const near = N - 3;
  const tampered: [
    string,
    string,
    (p: { index: number | null; kind: string }) => boolean,
  ][] = [
    [
      "a record value edited (still canonical)",
      text.replace(
        `{"digest":"sha256:${near}",`,
        `{"digest":"sha256:${near + 1}",`,
      ),
      (p) => p.index === near && p.kind === "hash",
    ],
    [
      "the last block's prev_hash edited",
      lines.slice(0, N).join("\n") + "\n" +
      lines[N]!.replace(/"prev_hash":"sha256:./, '"prev_hash":"sha256:f') +
      "\n" + lines.slice(N + 1).join("\n"),
      (p) => p.index === N - 1 && (p.kind === "prev_hash" || p.kind === "hash"),
    ],
    [
      "the last block dropped",
      lines.slice(0, N - 1).join("\n") + "\n" +
      lines[N - 1]!.replace(/,$/, "") + "\n" + lines.slice(N + 1).join("\n"),
      (p) => p.kind === "head",
    ],
    [
      "two blocks near the end swapped",
      [
        ...lines.slice(0, near + 1),
        lines[near + 2]!,
        lines[near + 1]!,
        ...lines.slice(near + 3),
      ].join("\n"),
      (p) => p.index === near + 1,
    ],
  ];
  for (const [what, t, expected] of tampered) {
    assert.notEqual(t, text, what);
    await Deno.writeTextFile(path, t);
    // The line walk refuses it, or (a shorter chain) does not reach the head.
    assert.equal(walkLedgerFile(path, w.head)?.ok ?? false, false, what);
    const bad = await verifyLedgerFile(path, w.head);
    assert.equal(bad.ok, false, what);
    assert.ok(
      bad.problems.some(expected),
      `${what}: ${JSON.stringify(bad.problems)}`,
    );
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a bad entry in a generator leaves the ledger as it was", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  const first = await appendBlocks(path, [{
    type: "report",
    record: { n: 0 },
  }]);
  const before = await Deno.readFile(path);
  function* gen() {
    for (let i = 1; i < 10_000; i++) {
      yield { type: i === 9_000 ? "" : "report", record: { n: i } };
    }
  }
  await assert.rejects(() => appendBlocks(path, gen()), TypeError);
  assert.deepEqual(await Deno.readFile(path), before);
  assert.equal((await verifyLedgerFile(path, first.head)).ok, true);
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
      !n.endsWith(".lock")
    ),
    ["ledger.json"],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a file past V8's string limit that is not verity's layout is refused with a one-line error, never buffered whole", async () => {
  const dir = await tmp();
  const path = join(dir, "big.json");
  const f = await Deno.open(path, { write: true, create: true });
  await f.truncate(600 * 2 ** 20); // sparse: no newline anywhere
  f.close();
  for (
    const call of [
      () => verifyLedgerFile(path, GENESIS),
      () => readLedgerFile(path),
    ]
  ) {
    await assert.rejects(
      call,
      (e: Error) =>
        e instanceof InputError &&
        /read whole, up to 536870888 bytes/.test(e.message),
    );
  }
  await assert.rejects(
    () => appendBlock(path, "report", { n: 1 }),
    (e: Error) =>
      e instanceof InputError &&
      /not a verity ledger in verity's own layout/.test(e.message),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the file verify gives the whole-text answer, intact or forged; a record not in canonical form is read whole, as Python reads it", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  const verify = async (text: string, head: string) => {
    await Deno.writeTextFile(path, text);
    return await verifyLedgerFile(path, head);
  };
  const entries = [
    {
      type: "declaration",
      record: parsePythonJson(
        '{"schema":{"maximum":1.0,"big":123456789012345678901234567890},"s":"é\\n😀"}',
      ),
    },
    {
      type: "report",
      record: { contract_recipes: ["3"], n: 0.00001, t: "tab\there" },
    },
    { type: "report", record: { contract_recipe: "2", empty: {}, list: [] } },
  ];
  const { lines, head } = chainBlocks(GENESIS, 0, entries);
  const text = ledgerText(lines);
  await Deno.writeTextFile(path, text);
  const w = walkLedgerFile(path, null);
  assert.deepEqual(w && [w.blocks, w.head], [3, head]);
  const { recipes, ...v } = await verify(text, head);
  assert.deepEqual(v, verifyLedger(parsePythonJson(text), head));
  assert.equal(v.ok, true);
  assert.deepEqual(recipes, ["2", "3"]);
  // Forgeries report what verifyLedger reports over the whole text.
  const forged = [
    text.replace('"maximum":1.0', '"maximum":1'),
    text.replace(`"index":2`, `"index":3`),
    text.slice(0, text.lastIndexOf(",\n")) + "\n]}\n",
  ];
  for (const f of forged) {
    await Deno.writeTextFile(path, f);
    assert.equal(walkLedgerFile(path, head)?.ok ?? false, false);
    const { recipes: _, ...bad } = await verify(f, head);
    assert.equal(bad.ok, false);
    assert.deepEqual(bad, verifyLedger(parsePythonJson(f), head));
  }
  // Whitespace is not content: the line walk parses the spaced record (it
  // is not the line chainBlocks writes) and verifies it.
  const spaced = text.replace('"maximum":1.0', '"maximum": 1.0');
  await Deno.writeTextFile(path, spaced);
  assert.equal(walkLedgerFile(path, head)?.ok, true);
  assert.equal((await verify(spaced, head)).ok, true);
  // Layout errors: what is not JSON is one line naming the file; CRLF line
  // ends (a checkout that converted them) are read whole and verify.
  for (
    const broken of [
      text + "x",
      text.slice(0, -"]}\n".length),
      text.replace("\n]}", ",\n]}"),
    ]
  ) {
    await Deno.writeTextFile(path, broken);
    await assert.rejects(
      () => verifyLedgerFile(path, head),
      (e: Error) => e instanceof InputError && /not valid JSON/.test(e.message),
    );
  }
  assert.equal((await verify(text.replaceAll("\n", "\r\n"), head)).ok, true);
  // A duplicated record key is refused by the strict reader, naming where.
  const dup = text.replace('"s":"é', '"s":"x","s":"é');
  const d = await verify(dup, head);
  assert.equal(d.ok, false);
  assert.match(
    d.problems[0]!.message,
    /duplicate key "s".*\/blocks\/0\/record/,
  );
  // The V8 key defect (FACTS.md): after a key "\\", a key "\t" in an object
  // of the same shape comes back wrong from JSON.parse; the line walk reads
  // lines with a backslash with the project's reader.
  const keys = chainBlocks(GENESIS, 0, [
    { type: "report", record: { a: 0, "\\": 1 } },
    { type: "report", record: { a: 1, "\t": 2 } },
  ]);
  await Deno.writeTextFile(path, ledgerText(keys.lines));
  assert.equal(walkLedgerFile(path, null)?.head, keys.head);
  const k = await verifyLedgerFile(path, keys.head);
  assert.equal(k.ok, true, JSON.stringify(k.problems));
  // The Python ledger is not in verity's layout: read whole.
  const py = await verify(PY_TEXT, PY_HEAD);
  assert.equal(py.ok, true, JSON.stringify(py.problems));
  assert.deepEqual(py.recipes, ["2"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the line walk counts block types, escaped ones included, and handles long records", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  const c = chainBlocks(GENESIS, 0, [
    {
      type: "report",
      record: { a: 1, s: "tab\there", big: "x".repeat(3_000_000) },
    },
    { type: "report", record: { b: [true, null, 0.5] } },
    { type: "note\u0001", record: {} },
  ]);
  await Deno.writeTextFile(path, ledgerText(c.lines));
  const w = walkLedgerFile(path, null);
  assert.equal(w?.head, c.head);
  assert.deepEqual(w?.types, { report: 2, "note\u0001": 1 });
  await Deno.remove(dir, { recursive: true });
});

/**
 * Tamper with a 30-block ledger 400 ways and compare the file verify with
 * verifyLedger over the whole parsed text. Records hold `marker`; `ascii`
 * keeps only ASCII types, so that lines are hashed as they stand.
 */
async function tamperedAgree(marker: string, ascii: boolean): Promise<void> {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  let seed = 5;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // Types short and long, escaped and not.
  const types = [
    "report",
    "note",
    "ty\npe",
    "é",
    "a-type-of-20-bytes",
    "t".repeat(71),
    "u".repeat(72),
    "v→".repeat(30),
  ].filter((t) => !ascii || !/[^\x20-\x7e\n]/.test(t));
  const entries = Array.from({ length: 30 }, (_, i) => ({
    type: pick(types),
    record: { i, digest: `sha256:${"ab".repeat(i % 5)}`, s: marker + i },
  }));
  const built = chainBlocks(GENESIS, 0, entries);
  const hex = "0123456789abcdef";
  const edits: ((ls: string[]) => string[])[] = [
    // a character of a record's string value
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(
        new RegExp(`"${marker}(\\d)`),
        (_m, d) => `"${marker}${(Number(d) + 1) % 10}`,
      );
      return ls;
    },
    // a published index
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(
        /^\{"index":\d+/,
        `{"index":${pick([0, 7, 31, 123])}`,
      );
      return ls;
    },
    // a hex digit of a prev_hash or of a hash (or an uppercase one)
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      const field = pick(['"prev_hash":"sha256:', '"hash":"sha256:']);
      const at = ls[k]!.indexOf(field) + field.length + Math.floor(rnd() * 64);
      const c = pick([...hex, "A"]);
      ls[k] = ls[k]!.slice(0, at) + c + ls[k]!.slice(at + 1);
      return ls;
    },
    // a block dropped, duplicated, or two swapped
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls.splice(k, 1);
      return ls;
    },
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls.splice(k, 0, ls[k]!);
      return ls;
    },
    (ls) => {
      const a = Math.floor(rnd() * ls.length);
      const b = Math.floor(rnd() * ls.length);
      [ls[a], ls[b]] = [ls[b]!, ls[a]!];
      return ls;
    },
    // a block's type changed
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(
        /"type":"[^"]*(?:\\.[^"]*)*"/,
        `"type":"${pick(["report", "forged"])}"`,
      );
      return ls;
    },
    // the chain rewritten from a block on, every hash recomputed
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      const from = k === 0 ? GENESIS : built.blocks[k - 1]!.hash;
      const forged = chainBlocks(
        from,
        k,
        entries.slice(k).map((e, j) =>
          j === 0 ? { ...e, record: { forged: true } } : e
        ),
      );
      return [...ls.slice(0, k), ...forged.lines];
    },
  ];
  let compared = 0;
  let refused = 0;
  for (let n = 0; n < 400; n++) {
    let lines = [...built.lines];
    const count = 1 + Math.floor(rnd() * 3);
    for (let e = 0; e < count && lines.length > 0; e++) {
      lines = pick(edits)([...lines]);
    }
    const text = ledgerText(lines);
    const expected = pick([
      built.head,
      built.head,
      built.blocks[Math.floor(rnd() * 30)]!.hash,
      GENESIS,
      "sha256:" + "5".repeat(64),
    ]);
    await Deno.writeTextFile(path, text);
    let general;
    try {
      general = verifyLedgerText(text, expected);
    } catch (e) {
      // Not JSON: the file verify says so in one line.
      assert.ok(e instanceof SyntaxError);
      await assert.rejects(() => verifyLedgerFile(path, expected), InputError);
      continue;
    }
    const { recipes: _, ...v } = await verifyLedgerFile(path, expected);
    assert.deepEqual(v, general, text);
    compared++;
    if (!v.ok) refused++;
  }
  assert.ok(
    compared > 350 && refused > 300,
    `${compared} compared, ${refused} refused`,
  );
  await Deno.remove(dir, { recursive: true });
}

Deno.test("a tampered ledger in verity's layout gets from the file verify exactly what verifyLedger finds in the whole parsed text (non-ASCII records: each line made again)", async () => {
  await tamperedAgree("x→", false);
});

Deno.test("a tampered ledger in verity's layout gets from the file verify exactly what verifyLedger finds in the whole parsed text (ASCII records: lines hashed as they stand)", async () => {
  await tamperedAgree("x-", true);
});

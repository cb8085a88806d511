import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
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
import { chainBlocks, ledgerText } from "./chain.ts";

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
      e instanceof UsageError &&
      /own chain does not verify .*block 0: hash/.test(e.message),
  );
  assert.equal(await Deno.readTextFile(path), tampered);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("appending refuses what is not a verity ledger: another tool's ledger, bad JSON", async () => {
  const dir = await tmp();
  const foreign = `${dir}/mev.json`;
  const text =
    '{"ledger":"mcp-evidence-validator","version":"0.3","blocks":[]}';
  await Deno.writeTextFile(foreign, text);
  await assert.rejects(
    () => appendBlock(foreign, "report", {}),
    /not a verity ledger/,
  );
  assert.equal(await Deno.readTextFile(foreign), text);
  const broken = `${dir}/broken.json`;
  await Deno.writeTextFile(broken, '{"ledger":');
  await assert.rejects(
    () => appendBlock(broken, "report", {}),
    (e: Error) =>
      e instanceof UsageError && /broken\.json: not valid JSON/.test(e.message),
  );
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
    ["broken.json", "mev.json"],
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
  // ~12,000 blocks of ~520 bytes: more than one 4 MiB read, so lines cross
  // chunk boundaries; non-ASCII text puts multi-byte characters across them.
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
  const w = await walkLedgerFile(path);
  assert.equal(w?.blocks, 12_000);
  assert.equal(w?.head, whole.head);
  const v = await verifyLedgerFile(path, whole.head);
  assert.equal(v.ok, true);
  // One character of block 9,000 changed: the stream walk fails, the
  // general path names the block.
  const text = new TextDecoder().decode(a).replace('→9000"', '→9001"');
  await Deno.writeTextFile(path, text);
  assert.equal(await walkLedgerFile(path), null);
  const bad = await verifyLedgerFile(path, whole.head);
  assert.equal(bad.ok, false);
  assert.ok(
    bad.problems.some((p) => p.index === 9000),
    JSON.stringify(bad.problems[0]),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a ledger written from a generator, a block at a time, verifies; a tampered block near its end is found", async () => {
  const dir = await tmp();
  const path = join(dir, "ledger.json");
  const N = 12_000; // ~5 MB: more than one 4 MiB read
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
    // The stream walk fails, or (a shorter chain) does not reach the head.
    assert.notEqual((await walkLedgerFile(path))?.head, w.head, what);
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
      () => appendBlock(path, "report", { n: 1 }),
    ]
  ) {
    await assert.rejects(
      call,
      (e: Error) =>
        e instanceof UsageError &&
        /read whole, up to 536870888 bytes/.test(e.message),
    );
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("verified on two threads, a ledger gets the one-thread answer under every tampering; a clean one is walked in segments, every hash checked on the worker", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  let seed = 17;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // Types built in place and one too long for that (hashed by the walk).
  const types = ["report", "note", "t".repeat(40), "v".repeat(80)];
  const entries = Array.from({ length: 240 }, (_, i) => ({
    type: i === 5 ? types[3]! : i % 37 === 5 ? pick(types) : "report",
    record: { i, digest: `sha256:${"ab".repeat(32)}`, s: "x→" + i },
  }));
  const built = chainBlocks(GENESIS, 0, entries);
  // About 40 pieces on one thread, 23 segments on two.
  const opts = { pieceBytes: 8192, segmentBytes: 2048 };
  const one = (p: string, head: string) =>
    verifyLedgerFile(p, head, { ...opts, twoThreads: false });
  const counts: { here: number; there: number; answered?: boolean } = {
    here: 0,
    there: 0,
  };
  await Deno.writeTextFile(path, ledgerText(built.lines));
  const clean = await verifyLedgerFile(path, built.head, {
    ...opts,
    twoThreads: true,
    workerHashesAll: true,
    counts,
  });
  assert.equal(clean.ok, true);
  // Every block this thread left in a slot was hashed by the worker.
  assert.ok(
    counts.here === 0 && counts.there > 0 && counts.answered,
    JSON.stringify(counts),
  );
  assert.deepEqual(clean, await one(path, built.head));
  const edits: ((ls: string[]) => void)[] = [
    // a record's character, so that only its hash tells
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(/"x→/, '"y→');
    },
    // a hex digit of a hash or prev_hash
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      const field = pick(['"prev_hash":"sha256:', '"hash":"sha256:']);
      const at = ls[k]!.indexOf(field) + field.length + Math.floor(rnd() * 64);
      ls[k] = ls[k]!.slice(0, at) + pick(["0", "f", "A"]) +
        ls[k]!.slice(at + 1);
    },
    // an index, a type
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(/^\{"index":\d+/, `{"index":${k + 1}`);
    },
    (ls) => {
      const k = Math.floor(rnd() * ls.length);
      ls[k] = ls[k]!.replace(/"type":"[^"]*"/, `"type":"${pick(types)}"`);
    },
    // a block dropped or two swapped
    (ls) => void ls.splice(Math.floor(rnd() * ls.length), 1),
    (ls) => {
      const a = Math.floor(rnd() * ls.length);
      const b = Math.floor(rnd() * ls.length);
      [ls[a], ls[b]] = [ls[b]!, ls[a]!];
    },
  ];
  let refused = 0;
  for (let n = 0; n < 40; n++) {
    const lines = [...built.lines];
    pick(edits)(lines);
    await Deno.writeTextFile(path, ledgerText(lines));
    const head = pick([built.head, built.blocks[100]!.hash]);
    const two = await verifyLedgerFile(path, head, {
      ...opts,
      twoThreads: true,
    });
    assert.deepEqual(two, await one(path, head));
    if (!two.ok) refused++;
  }
  assert.ok(refused >= 30, `${refused} refused`);
  // Short blocks (about 200 bytes: more per piece than a batch first has
  // room for), clean and with a record edited.
  const small = chainBlocks(
    GENESIS,
    0,
    Array.from({ length: 400 }, (_, i) => ({ type: "r", record: i })),
  );
  for (const k of [-1, 3, 399]) {
    const lines = [...small.lines];
    if (k >= 0) lines[k] = lines[k]!.replace(/"record":\d+/, '"record":1000');
    await Deno.writeTextFile(path, ledgerText(lines));
    const two = await verifyLedgerFile(path, small.head, {
      ...opts,
      twoThreads: true,
      workerHashesAll: true,
      counts,
    });
    assert.equal(two.ok, k < 0);
    assert.equal(counts.answered, k < 0); // a clean one without a second walk
    assert.deepEqual(two, await one(path, small.head));
  }
  // A record edited in a block whose type is too long to hash in place
  // (hashed by the walk itself), and in an ordinary one (by the worker).
  for (const k of [5, 42, 239]) {
    const lines = [...built.lines];
    lines[k] = lines[k]!.replace(/"x→/, '"y→');
    await Deno.writeTextFile(path, ledgerText(lines));
    const two = await verifyLedgerFile(path, built.head, {
      ...opts,
      twoThreads: true,
      workerHashesAll: true,
    });
    assert.equal(two.ok, false);
    assert.deepEqual(two, await one(path, built.head));
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("two threads: a worker that fails at its start costs only its share: this thread hashes every block and answers", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  const built = chainBlocks(
    GENESIS,
    0,
    Array.from({ length: 300 }, (_, i) => ({ type: "report", record: { i } })),
  );
  await Deno.writeTextFile(path, ledgerText(built.lines));
  const broken = `${dir}/broken_worker.ts`;
  await Deno.writeTextFile(broken, 'throw new Error("no worker today");\n');
  const counts: { here: number; there: number; answered?: boolean } = {
    here: 0,
    there: 0,
  };
  const two = await verifyLedgerFile(path, built.head, {
    twoThreads: true,
    segmentBytes: 2048,
    workerModule: new URL(`file://${broken}`).href,
    counts,
  });
  assert.deepEqual(
    two,
    await verifyLedgerFile(path, built.head, { twoThreads: false }),
  );
  assert.ok(
    counts.answered && counts.there === 0 && counts.here === 300,
    JSON.stringify(counts),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("two threads sharing slots: a clean ledger is answered every time, in every order the threads take; a line longer than a slot is walked by this thread", async () => {
  // Many small segments through few slots, so that slots are freed out of
  // order and written again while the other thread still reads the ring:
  // a race in the claims would show as a refused clean ledger (or a
  // second walk) in some run.
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  const entries = Array.from({ length: 700 }, (_, i) => ({
    type: i === 350 ? "v".repeat(80) : "report",
    record: i === 123
      ? { big: "z".repeat(20_000) }
      : { i, digest: `sha256:${"cd".repeat(32)}`, s: "x→" + i },
  }));
  const built = chainBlocks(GENESIS, 0, entries);
  await Deno.writeTextFile(path, ledgerText(built.lines));
  const whole = await verifyLedgerFile(path, built.head, {
    twoThreads: false,
  });
  assert.equal(whole.ok, true);
  let there = 0;
  for (let run = 0; run < 24; run++) {
    const counts: { here: number; there: number; answered?: boolean } = {
      here: 0,
      there: 0,
    };
    const two = await verifyLedgerFile(path, built.head, {
      twoThreads: true,
      segmentBytes: 1024 + 512 * (run % 5),
      workerHashesAll: run % 2 === 0,
      counts,
    });
    assert.equal(
      counts.answered,
      true,
      `run ${run}: ${JSON.stringify(counts)}`,
    );
    assert.deepEqual(two, whole);
    there += counts.there;
  }
  assert.ok(there > 0, "the worker hashed no block");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("segments on one thread: no worker, every block hashed here in WebAssembly, the stream walk's answer clean and tampered; a hashing module that cannot be made leaves the stream walk to answer", async () => {
  const dir = await tmp();
  const path = `${dir}/ledger.json`;
  const built = chainBlocks(
    GENESIS,
    0,
    Array.from({ length: 300 }, (_, i) => ({
      type: i % 3 === 0 ? "report" : "contract",
      // Mostly in the WebAssembly walk's subset; a non-ASCII record now
      // and then (its segment walked by the walker).
      record: { i, text: i % 40 === 7 ? "é" : "plain" },
    })),
  );
  const clean = ledgerText(built.lines);
  await Deno.writeTextFile(path, clean);
  const stream = () =>
    verifyLedgerFile(path, built.head, { twoThreads: false, stream: true });
  const counts: {
    here: number;
    there: number;
    answered?: boolean;
    noArena?: boolean;
    walkedHere?: number;
  } = { here: 0, there: 0 };
  const seg = await verifyLedgerFile(path, built.head, {
    twoThreads: true,
    noWorker: true,
    segmentBytes: 4096,
    counts,
  });
  assert.equal(seg.ok, true);
  assert.deepEqual(seg, await stream());
  // Every block hashed here; most segments between the first and the
  // last walked in WebAssembly.
  assert.ok(
    counts.answered && counts.here === 300 && counts.there === 0 &&
      counts.walkedHere! > 5,
    JSON.stringify(counts),
  );
  // A digit of a hash, a record and a prev_hash changed: refused, with the
  // stream walk's problems.
  const at = [clean.indexOf('"hash":"sha256:', 9000) + 20, 20000, 40000];
  for (const k of at) {
    const b = new TextEncoder().encode(clean);
    b[k] = b[k] === 0x30 ? 0x31 : 0x30;
    await Deno.writeFile(path, b);
    const c = { here: 0, there: 0, answered: false };
    const r = await verifyLedgerFile(path, built.head, {
      twoThreads: true,
      noWorker: true,
      segmentBytes: 4096,
      counts: c,
    });
    assert.equal(r.ok, false, `byte ${k}`);
    assert.equal(c.answered, false);
    assert.deepEqual(r, await stream());
  }
  // No module: the stream walk answers, the same.
  await Deno.writeTextFile(path, clean);
  const none: { here: number; there: number; noArena?: boolean } = {
    here: 0,
    there: 0,
  };
  const fallback = await verifyLedgerFile(path, built.head, {
    twoThreads: true,
    lanesWasm: new Uint8Array([0, 0x61, 0x73, 0x6d, 9, 9, 9, 9]),
    counts: none,
  });
  assert.equal(none.noArena, true);
  assert.deepEqual(fallback, await stream());
  await Deno.remove(dir, { recursive: true });
});

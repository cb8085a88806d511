import assert from "node:assert/strict";
import {
  chainBlocks,
  GENESIS,
  joinSegments,
  ledgerText,
  type SegmentWalk,
  VerityByteWalker,
} from "./chain.ts";
import { CHUNK, type HashSlot, LaneHasher, newHashArena } from "./slot_hash.ts";
import {
  type SegmentOutcome,
  segmentPlan,
  walkSegment,
  walkSegmentDeferred,
} from "./segment_walk.ts";
import { verifyLedgerFile } from "./ledger.ts";
import { createPrng } from "../reality/prng.ts";

/**
 * Every segment of the file walked here in turn, then joined; null when
 * the join refuses. Deferred: each segment walked with its hashing left
 * in a slot (walked with its hashes when it asks), the slot's hashes then
 * checked, as the two threads share it; a check that fails is null too.
 */
async function joined(path: string, bytes: number, deferred = false) {
  const plan = segmentPlan((await Deno.stat(path)).size, bytes);
  using file = Deno.openSync(path);
  const walks: SegmentWalk[] = [];
  const recipes = new Set<string>();
  const arena = newHashArena(2 * bytes + 4096, 1, 1);
  const slot = arena.slots[0]!;
  const hasher = new LaneHasher(arena, arena.work[0]!);
  for (let k = 0; k < plan.count; k++) {
    let r: SegmentOutcome;
    if (deferred) {
      const d = walkSegmentDeferred(file, plan, k, slot);
      if (d.outcome === "hash here") {
        hashedHere++;
        r = walkSegment(file, plan, k);
      } else {
        if (d.outcome !== null && !checkAll(hasher, slot, d.deferred)) {
          return null;
        }
        r = d.outcome;
      }
    } else r = walkSegment(file, plan, k);
    if (r === null) return null;
    if (r === "empty") continue;
    walks.push(r);
    for (const x of r.recipes) recipes.add(x);
  }
  const j = joinSegments(walks);
  return j === null ? null : { ...j, recipes: [...recipes].sort() };
}

/** The first `n` deferred hashes of `slot`, a chunk at a time, all equal. */
function checkAll(hasher: LaneHasher, slot: HashSlot, n: number): boolean {
  for (let i = 0; i < n; i += CHUNK) {
    if (!hasher.check(slot, i, Math.min(n, i + CHUNK))) return false;
  }
  return true;
}

/** Segments a deferred walk asked to walk with their hashes (a long type or line). */
let hashedHere = 0;

const one = (path: string, head: string) =>
  verifyLedgerFile(path, head, { twoThreads: false });

Deno.test("segments: a clean ledger joins to the one-thread walk at every segment size, boundaries anywhere", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/ledger.json`;
  // Short and long lines, a type too long to build in place, recipes, and
  // one line longer than most segment sizes below.
  const entries = Array.from({ length: 60 }, (_, i) => ({
    type: i % 9 === 4 ? "v".repeat(80) : i % 5 === 0 ? "note" : "report",
    record: i === 30
      ? { big: "y".repeat(3000) }
      : i % 11 === 3
      ? { contract_recipe: `r${i}`, i }
      : { i, s: "x→" + i },
  }));
  const built = chainBlocks(GENESIS, 0, entries);
  await Deno.writeTextFile(path, ledgerText(built.lines));
  // A short ledger whose last line is longer than the smallest segments,
  // cut at every size from one byte up, and the longer one from 150.
  const short = chainBlocks(GENESIS, 0, [
    { type: "r", record: 0 },
    { type: "r", record: { s: "z".repeat(300) } },
  ]);
  const shortPath = `${dir}/short.json`;
  await Deno.writeTextFile(shortPath, ledgerText(short.lines));
  let empties = 0;
  for (const [p, head] of [[shortPath, short.head], [path, built.head]]) {
    const whole = await one(p!, head!);
    assert.equal(whole.ok, true);
    const size = (await Deno.stat(p!)).size;
    const sizes: number[] = [];
    if (p === shortPath) { for (let b = 1; b <= size + 1; b++) sizes.push(b); }
    else for (let b = 150; b <= size + 10; b += b < 450 ? 3 : 97) sizes.push(b);
    for (const bytes of sizes) {
      for (const deferred of [false, true]) {
        const j = await joined(p!, bytes, deferred);
        assert.ok(
          j !== null,
          `segments of ${bytes} bytes refused a clean ledger (deferred: ${deferred})`,
        );
        assert.equal(j.head, whole.head);
        assert.equal(j.blocks, whole.blocks);
        assert.deepEqual(j.types, whole.types);
        assert.deepEqual(Object.keys(j.types), Object.keys(whole.types));
        assert.deepEqual(j.recipes, whole.recipes);
      }
      const plan = segmentPlan(size, bytes);
      using file = Deno.openSync(p!);
      for (let k = 0; k < plan.count; k++) {
        if (walkSegment(file, plan, k) === "empty") empties++;
      }
    }
  }
  assert.ok(empties > 0, "no segment without a line start was walked");
  // The long type, and the long line wherever it is longer than a slot.
  assert.ok(hashedHere > 0, "no deferred walk asked to be hashed here");
  await Deno.remove(dir, { recursive: true });
});

Deno.test("segments: no tampering joins, whatever the segment size (the one-thread walk then names it)", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/ledger.json`;
  const prng = createPrng(23);
  const pick = <T>(xs: readonly T[]): T => prng.pick(xs);
  const built = chainBlocks(
    GENESIS,
    0,
    Array.from({ length: 40 }, (_, i) => ({
      type: "report",
      record: { i, d: "ab".repeat(20 + (i % 7) * 9) },
    })),
  );
  const entries = built.blocks.map((b) => ({ type: b.type, record: b.record }));
  const rehash = (ls: string[]): string[] => {
    // A forged chain: every hash recomputed after an edit (only the head
    // kept elsewhere tells).
    const blocks = ls.map((l) => JSON.parse(l.replace(/,$/, "")));
    return chainBlocks(
      GENESIS,
      0,
      blocks.map((b) => ({ type: b.type, record: b.record })),
    ).lines;
  };
  const k = () => prng.int(1, built.lines.length - 1);
  type Edit = (ls: string[]) => string[] | { text: string; head: string };
  const edits: [string, Edit][] = [
    ["record", (ls) => {
      const n = k();
      ls[n] = ls[n]!.replace(/"i":(\d+)/, '"i":9$1');
      return ls;
    }],
    ["hash digit", (ls) => {
      const n = k();
      const f = pick(['"prev_hash":"sha256:', '"hash":"sha256:']);
      const at = ls[n]!.indexOf(f) + f.length + prng.int(0, 63);
      const other = ls[n]![at] === "0" ? "f" : "0";
      ls[n] = ls[n]!.slice(0, at) + other + ls[n]!.slice(at + 1);
      return ls;
    }],
    ["index", (ls) => {
      const n = k();
      ls[n] = ls[n]!.replace(/^\{"index":\d+/, `{"index":${n + 1}`);
      return ls;
    }],
    ["dropped", (ls) => {
      ls.splice(k(), 1);
      return ls;
    }],
    ["duplicated", (ls) => {
      const n = k();
      ls.splice(n, 0, ls[n]!);
      return ls;
    }],
    ["swapped", (ls) => {
      const a = k() - 1;
      [ls[a], ls[a + 1]] = [ls[a + 1]!, ls[a]!];
      return ls;
    }],
    ["forged and rehashed", (ls) => {
      const n = k();
      ls[n] = ls[n]!.replace(/"i":(\d+)/, '"i":7$1');
      return rehash(ls);
    }],
    ["truncated", (ls) => ls.slice(0, k())],
    // A comma dropped after a block line (no hash changes).
    ["comma dropped", (ls) => {
      const n = k() - 1;
      const text = ledgerText(ls);
      let at = -1;
      for (let c = 0; c <= n; c++) at = text.indexOf(",\n{", at + 1);
      return {
        text: text.slice(0, at) + text.slice(at + 1),
        head: built.head,
      };
    }],
    // Block n's prev_hash changed and the chain rehashed from it: the head
    // given is the forged chain's, so only the link to block n - 1 tells.
    ["prev forged", (ls) => {
      const n = k();
      const forged = chainBlocks(
        "sha256:" + "7".repeat(64),
        n,
        entries.slice(n),
      );
      return {
        text: ledgerText([...ls.slice(0, n), ...forged.lines]),
        head: forged.head,
      };
    }],
  ];
  let checked = 0;
  for (let n = 0; n < 40; n++) {
    const [name, edit] = edits[n % edits.length]!;
    const edited = edit([...built.lines]);
    const { text, head } = Array.isArray(edited)
      ? { text: ledgerText(edited), head: built.head }
      : edited;
    // Besides the edits: trailing bytes, a missing closing line.
    const kind = Math.floor(n / edits.length) % 4;
    const variant = kind === 1
      ? text + "x\n"
      : kind === 2
      ? text.slice(0, -3)
      : text;
    await Deno.writeTextFile(path, variant);
    const whole = await one(path, head).catch(() => null);
    assert.ok(whole === null || !whole.ok, `${name}: the edit did not tell`);
    const size = variant.length;
    for (
      let bytes = 100;
      bytes <= size;
      bytes = Math.ceil(bytes * 1.12) + prng.int(0, 9)
    ) {
      for (const deferred of [false, true]) {
        const j = await joined(path, bytes, deferred);
        assert.ok(
          j === null || j.head !== head,
          `${name} (variant ${kind}): segments of ${bytes} bytes joined to the expected head (deferred: ${deferred})`,
        );
        checked++;
      }
    }
  }
  assert.ok(checked > 1600, `${checked} splits checked`);
  await Deno.remove(dir, { recursive: true });
});

/**
 * Walk the block lines `seg` (lying in `slot.data`) both ways: with the
 * walker, deferred, as a segment that is not the file's last, and in
 * WebAssembly. Whenever the WebAssembly walk takes it, the walker must take
 * it the same way (the walk, its types in the same order, each block's
 * positions). Whether each took it.
 */
function walkBoth(
  hasher: LaneHasher,
  slot: HashSlot,
  seg: Uint8Array,
  what: string,
): { taken: boolean; walkerTakes: boolean } {
  const w = VerityByteWalker.segmentAt(seg, 0);
  let walker: SegmentWalk | null = null;
  let walkerAt: number[] = [];
  if (w !== null) {
    w.deferTo(slot);
    const tail = w.lines(seg);
    if (tail >= 0) walker = w.segment(false, seg.subarray(tail));
    if (walker !== null) walkerAt = [...slot.at.subarray(0, 4 * w.deferred)];
  }
  slot.at.fill(-7);
  const fast = hasher.walkLines(seg, slot);
  if (fast !== null) {
    assert.ok(walker !== null && walker.clean, what);
    assert.deepEqual(
      {
        ...fast.walk,
        lastHadComma: true,
        closed: false,
        clean: true,
        recipes: [],
      },
      walker,
      what,
    );
    assert.deepEqual(
      Object.keys(fast.walk.types),
      Object.keys(walker.types),
      `${what}: types in the same order`,
    );
    assert.deepEqual(
      [...slot.at.subarray(0, 4 * fast.deferred)],
      walkerAt,
      what,
    );
  }
  return { taken: fast !== null, walkerTakes: walker?.clean === true };
}

/**
 * A random JSON value: inside the WebAssembly walk's subset when `plain`,
 * otherwise often not.
 */
function randomValue(
  rnd: ReturnType<typeof createPrng>,
  depth: number,
  plain: boolean,
): unknown {
  let pick = rnd.int(0, depth > 3 ? 5 : 9);
  if (plain && pick === 1) pick = 0;
  if (plain && (pick === 3 || pick === 4)) pick = 5;
  switch (pick) {
    case 0:
      return rnd.pick([0, 1, -1, 7, -12, 1234567890123, 2 ** 40, -(2 ** 33)]);
    case 1:
      return rnd.pick([1.5, -0.25, 1e21, 1e-7, 3.0e10, 0.1]); // floats: outside
    case 2:
      return rnd.pick([true, false, null]);
    case 3:
    case 4:
      return rnd.pick([
        "",
        "plain text",
        "!#$%&'()*+,-./:;<=>?@[]^_`{|}~",
        'a "quoted" word', // escapes: outside
        "back\\slash",
        "é", // non-ASCII: outside
        "\u0001",
        "\x7f", // DEL: outside
        "tab\there",
      ]);
    case 5:
      return "s".repeat(rnd.int(0, 40));
    case 6:
    case 7: {
      const o: Record<string, unknown> = {};
      const n = rnd.int(0, 4);
      for (let k = 0; k < n; k++) {
        const key = rnd.pick([
          "a",
          "ab",
          "b",
          "",
          "zz",
          "A",
          "contract_recipe", // recipes: outside
          "contract_recipes",
          "contract_recipeX",
          "é",
          "k" + rnd.int(0, 99),
        ]);
        if (plain && (key.startsWith("contract_recipe") || key === "é")) {
          continue;
        }
        o[key] = randomValue(rnd, depth + 1, plain);
      }
      return o;
    }
    default: {
      const n = rnd.int(0, 3);
      return Array.from(
        { length: n },
        () => randomValue(rnd, depth + 1, plain),
      );
    }
  }
}

Deno.test("segments walked in WebAssembly: what it takes, the walker takes the same way (random records, random byte edits); what is outside its subset it leaves to the walker", () => {
  const rnd = createPrng(31);
  const arena = newHashArena(1 << 16, 1, 1);
  const slot = arena.slots[0]!;
  const hasher = new LaneHasher(arena, arena.work[0]!);
  const edits = [...'0123456789"\\{}[],:aeE.- x'].map((c) => c.charCodeAt(0))
    .concat([0x7f, 0xc3, 0x00]);
  let taken = 0;
  let takenEdited = 0;
  let left = 0;
  for (let round = 0; round < 1500; round++) {
    const nested = rnd.int(0, 30) === 0;
    const plain = rnd.int(0, 1) === 0;
    const entries = Array.from({ length: rnd.int(3, 9) }, (_, i) => {
      let record = randomValue(rnd, 0, plain);
      if (nested) {
        // Deeper than the subset's 64 levels, or just within.
        for (let d = 0; d < rnd.pick([63, 64, 70]); d++) record = [record];
      }
      return {
        type: plain
          ? rnd.pick(["report", "report", "contract", "t" + (i % 3)])
          : rnd.pick(["report", "contract", "t" + (i % 3), "é"]),
        record,
      };
    });
    const lines = ledgerText(chainBlocks(GENESIS, 0, entries).lines).split(
      "\n",
    );
    // Block lines only, every one ending with a comma: the first block's
    // line to the one before the last.
    const text = lines.slice(1, lines.length - 3).join("\n") + "\n";
    const bytes = new TextEncoder().encode(text);
    const edited = rnd.int(0, 2) > 0;
    let b = bytes;
    if (edited) {
      const at = rnd.int(0, bytes.length - 2);
      const kind = rnd.int(0, 2);
      if (kind === 0) {
        b = bytes.slice();
        b[at] = rnd.pick(edits);
      } else if (kind === 1) {
        b = new Uint8Array([
          ...bytes.subarray(0, at),
          ...bytes.subarray(at + 1),
        ]);
      } else {
        b = new Uint8Array([
          ...bytes.subarray(0, at),
          rnd.pick(edits),
          ...bytes.subarray(at),
        ]);
      }
    }
    if (b.length > slot.data.length - 64) continue;
    slot.data.fill(0x20);
    slot.data.set(b);
    const seg = slot.data.subarray(0, b.length);
    const r = walkBoth(hasher, slot, seg, `round ${round}: ${text}`);
    if (r.taken) {
      taken++;
      if (edited) takenEdited++;
    } else if (r.walkerTakes) left++;
  }
  // Both ways are exercised: many segments taken (edited ones among them,
  // e.g. a digit of a hash), and many the walker takes left to it.
  assert.ok(
    taken > 200 && takenEdited > 20 && left > 200,
    `${taken} ${takenEdited} ${left}`,
  );
});

Deno.test("segments walked in WebAssembly: chosen records, each taken or left as the walker decides (key order, numbers, literals, nesting, recipes)", () => {
  const arena = newHashArena(1 << 16, 1, 1);
  const slot = arena.slots[0]!;
  const hasher = new LaneHasher(arena, arena.work[0]!);
  const hex = (i: number) => i.toString(16).padStart(64, "0");
  /** Three block lines around `record` (the hashes are not checked here). */
  const segment = (record: string) => {
    let text = "";
    for (let i = 0; i < 3; i++) {
      const prev = "sha256:" + hex(i === 0 ? 0 : 1000 + i - 1);
      text += `{"index":${5 + i},"prev_hash":"${prev}","type":"report",` +
        `"record":${i === 1 ? record : '{"n":1}'},"hash":"sha256:${
          hex(1000 + i)
        }"},\n`;
    }
    return new TextEncoder().encode(text);
  };
  const both = (record: string) => {
    const b = segment(record);
    slot.data.set(b);
    return walkBoth(hasher, slot, slot.data.subarray(0, b.length), record);
  };
  const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
  // In the subset: taken.
  for (
    const r of [
      "{}",
      "[]",
      '{"a":1,"ab":2}',
      '{"A":1,"a":2,"b":[true,false,null]}',
      '{"":0,"a":-1,"b":10,"c":1234567890123456789}',
      '{"a":{"b":{"c":[[],{}]}}}',
      '"plain !#$%&()*+,-./:;<=>?@[]^_`{|}~"',
      '{"contract_recip":1,"contract_recipf":2}',
      deep(63),
      deep(64),
    ]
  ) assert.deepEqual(both(r), { taken: true, walkerTakes: true }, r);
  // Canonical, outside the subset: left to the walker, which takes them.
  for (
    const r of [
      "1.5",
      "1.0",
      '{"a":0.25}',
      '"a\\"b"',
      '"tab\\there"',
      '"\\u0001"',
      '"é"',
      '"\x7f"',
      '{"é":1}',
      '{"contract_recipe":"x"}',
      '{"contract_recipes":["x"]}',
      deep(65),
    ]
  ) assert.deepEqual(both(r), { taken: false, walkerTakes: true }, r);
  // Not canonical: neither takes them.
  for (
    const r of [
      '{"b":1,"a":2}',
      '{"a":1,"a":2}',
      '{"ab":1,"a":2}',
      '{"a":1,}',
      "[1,2,]",
      "[,1]",
      "[1 ,2]",
      '{"a" :1}',
      '{"a":}',
      "01",
      "-01",
      "-0",
      "1e5",
      "1E5",
      "1.",
      "tru",
      "nul",
      "falsey",
      "{}}",
      "[]]",
      '"\\/"',
      "{\"a\":'x'}",
    ]
  ) assert.deepEqual(both(r), { taken: false, walkerTakes: false }, r);
});

Deno.test("segments walked in WebAssembly: types that change on every line (as a run's report, manifest and reality blocks do) are taken, one run per line", () => {
  const arena = newHashArena(1 << 18, 1, 1);
  const slot = arena.slots[0]!;
  const hasher = new LaneHasher(arena, arena.work[0]!);
  const types = ["report", "manifest", "reality"];
  const entries = Array.from({ length: 602 }, (_, i) => ({
    type: types[i % 3]!,
    record: { i, run_id: `run-${i >> 2}` },
  }));
  const lines = ledgerText(chainBlocks(GENESIS, 0, entries).lines).split("\n");
  const b = new TextEncoder().encode(
    lines.slice(1, lines.length - 3).join("\n") + "\n",
  );
  slot.data.set(b);
  const r = walkBoth(hasher, slot, slot.data.subarray(0, b.length), "600");
  assert.deepEqual(r, { taken: true, walkerTakes: true });
});

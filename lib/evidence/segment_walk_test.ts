import assert from "node:assert/strict";
import {
  chainBlocks,
  GENESIS,
  joinSegments,
  ledgerText,
  type SegmentWalk,
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

/**
 * Crashes and concurrent runs: a writer SIGKILLed while holding the ledger
 * lock leaves nothing that blocks the next one; concurrent writers never
 * lose a block; a report whose writer died before the ledger append is
 * recovered; dead runs' scratch directories and temporary files are
 * removed; reports are never overwritten; the ledger is read strictly
 * before anything is appended to it.
 */
import assert from "node:assert/strict";
import { appendBlock, verifyLedger } from "../lib/evidence/ledger.ts";
import { writeTextFileAtomic } from "../lib/evidence/atomic_write.ts";
import { cleanScratch, recoverRuns } from "../lib/cli/_recover.ts";
import { ownerText, selfOwner } from "../lib/common/owner.ts";
import { parseEvidenceJson } from "../lib/evidence/canonical.ts";

const LEDGER_TS = new URL("../lib/evidence/ledger.ts", import.meta.url).href;
const dec = new TextDecoder();

function readLedger(path: string): {
  blocks: { type: string; record: Record<string, unknown> }[];
} {
  return parseEvidenceJson(Deno.readTextFileSync(path), {
    numbers: "python",
  }) as never;
}

/** A pid that certainly belongs to no running process now. */
async function deadPid(): Promise<number> {
  const c = new Deno.Command("true").spawn();
  await c.status;
  return c.pid;
}

Deno.test("ledger lock: a writer SIGKILLed while holding it does not block the next append", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-crash-" });
  const ledger = `${dir}/ledger.json`;
  try {
    const holder = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { withLedgerLock } from "${LEDGER_TS}";
         await withLedgerLock(${JSON.stringify(ledger)}, async () => {
           console.log("held");
           await new Promise(() => setInterval(() => {}, 1000));
         });`,
      ],
      stdout: "piped",
    }).spawn();
    const reader = holder.stdout.getReader();
    const first = await reader.read();
    assert.match(dec.decode(first.value), /held/);
    holder.kill("SIGKILL");
    await holder.status;
    reader.releaseLock();
    const t0 = performance.now();
    const r = await appendBlock(ledger, "report", { run_id: "after-kill" });
    assert.equal(r.index, 0);
    assert.ok(
      performance.now() - t0 < 5_000,
      "no waiting for a stale lock",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ledger lock: 6 concurrent writers of 5 blocks each lose none, and every printed head is in the chain", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-crash-" });
  const ledger = `${dir}/ledger.json`;
  try {
    const writers = Array.from(
      { length: 6 },
      (_, w) =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "eval",
            `import { appendBlock } from "${LEDGER_TS}";
           for (let i = 0; i < 5; i++) {
             const r = await appendBlock(${
              JSON.stringify(ledger)
            }, "report", { run_id: "w${w}-" + i });
             console.log(r.head);
           }`,
          ],
          stdout: "piped",
          stderr: "piped",
        }).output(),
    );
    const outs = await Promise.all(writers);
    for (const o of outs) assert.equal(o.code, 0, dec.decode(o.stderr));
    const heads = outs.flatMap((o) => dec.decode(o.stdout).trim().split("\n"));
    const doc = readLedger(ledger);
    assert.equal(doc.blocks.length, 30);
    const v = verifyLedger(doc, heads.at(-1) ?? "");
    const hashes = new Set(
      (doc.blocks as unknown as { hash: string }[]).map((b) => b.hash),
    );
    for (const h of heads) {
      assert.ok(hashes.has(h), `head ${h} is in the chain`);
    }
    assert.equal(
      v.problems.filter((p) => p.kind !== "head").length,
      0,
      JSON.stringify(v.problems),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("recovery: a report whose writer died before the ledger append is appended by the next run; one without a marker is flagged", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-crash-runs-" });
  try {
    await appendBlock(`${runs}/ledger.json`, "report", { run_id: "earlier" });
    Deno.mkdirSync(`${runs}/earlier`);
    Deno.writeTextFileSync(`${runs}/earlier/report.json`, "{}\n");
    Deno.mkdirSync(`${runs}/killed`);
    Deno.writeTextFileSync(`${runs}/killed/report.json`, '{"a":1}\n');
    Deno.writeTextFileSync(
      `${runs}/killed/.writer`,
      ownerText({ pid: await deadPid(), start: 1 }),
    );
    Deno.mkdirSync(`${runs}/running`);
    Deno.writeTextFileSync(`${runs}/running/report.json`, "{}\n");
    Deno.writeTextFileSync(`${runs}/running/.writer`, ownerText(selfOwner()));
    Deno.mkdirSync(`${runs}/orphan`);
    Deno.writeTextFileSync(`${runs}/orphan/report.json`, "{}\n");
    const tmp = `${runs}/.ledger.json.${await deadPid()}.0123abcd.tmp`;
    Deno.writeTextFileSync(tmp, "half");
    const r = await recoverRuns(runs);
    assert.deepEqual(r.recovered, ["killed"]);
    assert.deepEqual(r.unrecorded, ["orphan"]);
    assert.equal(r.removedTemp, 1);
    const blocks = readLedger(`${runs}/ledger.json`).blocks;
    assert.deepEqual(blocks.map((b) => b.record.run_id), ["earlier", "killed"]);
    assert.equal(blocks[1]!.record.recovered, true);
    assert.match(String(blocks[1]!.record.digest), /^sha256:[0-9a-f]{64}$/);
    // The live writer's report is left to it; the marker of the recovered one is gone.
    assert.ok(Deno.statSync(`${runs}/running/.writer`).isFile);
    assert.throws(() => Deno.statSync(`${runs}/killed/.writer`));
    // Idempotent: a second pass appends nothing.
    assert.deepEqual((await recoverRuns(runs)).recovered, []);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("recovery: scratch directories of dead runs are removed, live ones and unmarked ones kept", async () => {
  const root = await Deno.makeTempDir({ prefix: "verity-crash-tmp-" });
  try {
    for (
      const [name, owner] of [
        ["verity-run-dead", ownerText({ pid: await deadPid(), start: 1 })],
        ["verity-cmd-dead", ownerText({ pid: await deadPid(), start: null })],
        ["verity-seeds-dead", ownerText({ pid: await deadPid(), start: 1 })],
        ["verity-seeds-live", ownerText(selfOwner())],
        ["verity-run-live", ownerText(selfOwner())],
        ["verity-run-unmarked", null],
        ["other-dead", ownerText({ pid: await deadPid(), start: 1 })],
        // Overlay layers, in the tmpfs given as the second root only.
        [
          "shm/verity-layers-dead",
          ownerText({ pid: await deadPid(), start: 1 }),
        ],
        ["shm/verity-layers-live", ownerText(selfOwner())],
        ["shm/verity-run-dead", ownerText({ pid: await deadPid(), start: 1 })],
        ["verity-layers-dead", ownerText({ pid: await deadPid(), start: 1 })],
      ] as const
    ) {
      Deno.mkdirSync(`${root}/${name}/state`, { recursive: true });
      if (owner !== null) {
        Deno.writeTextFileSync(`${root}/${name}/.owner`, owner);
      }
    }
    assert.equal(await cleanScratch(root, `${root}/shm`), 4);
    assert.deepEqual(
      [...Deno.readDirSync(root)].map((e) => e.name).sort(),
      [
        "other-dead",
        "shm",
        "verity-layers-dead",
        "verity-run-live",
        "verity-run-unmarked",
        "verity-seeds-live",
      ],
    );
    assert.deepEqual(
      [...Deno.readDirSync(`${root}/shm`)].map((e) => e.name).sort(),
      ["verity-layers-live", "verity-run-dead"],
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("reports are never overwritten: a no-overwrite atomic write refuses an existing file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-crash-" });
  try {
    await writeTextFileAtomic(`${dir}/report.json`, "first\n", {
      overwrite: false,
    });
    await assert.rejects(
      () =>
        writeTextFileAtomic(`${dir}/report.json`, "second\n", {
          overwrite: false,
        }),
      Deno.errors.AlreadyExists,
    );
    assert.equal(Deno.readTextFileSync(`${dir}/report.json`), "first\n");
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [
      "report.json",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ledger tricks: a duplicated blocks key or record key, or an extra top-level key, is refused before appending", async () => {
  const dir = await Deno.makeTempDir({ prefix: "verity-crash-" });
  try {
    const path = `${dir}/ledger.json`;
    await appendBlock(path, "report", { run_id: "a" });
    const good = Deno.readTextFileSync(path);
    const doc = JSON.parse(good);
    const tricks = [
      good.replace('"blocks":[', '"blocks":[],"blocks":['),
      good.replace('"run_id":"a"', '"run_id":"a","run_id":"b"'),
      JSON.stringify({ ...doc, extra: 1 }),
    ];
    for (const t of tricks) {
      assert.notEqual(t, good);
      Deno.writeTextFileSync(path, t);
      await assert.rejects(
        () => appendBlock(path, "report", { run_id: "c" }),
        // Refused: a file not in verity's own line layout is never appended to.
        /duplicate|top-level key|does not verify|own layout/i,
        t.slice(0, 120),
      );
      assert.equal(Deno.readTextFileSync(path), t, "left as it was");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verity ledger recover: appends a dead writer's report, flags an unmarked one (exit 1)", async () => {
  const runs = await Deno.makeTempDir({ prefix: "verity-crash-cli-" });
  const main = new URL("../main.ts", import.meta.url).pathname;
  const recover = () =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, "ledger", "recover", "--runs-dir", runs],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
  try {
    Deno.mkdirSync(`${runs}/killed`);
    Deno.writeTextFileSync(`${runs}/killed/report.json`, "{}\n");
    Deno.writeTextFileSync(
      `${runs}/killed/.writer`,
      ownerText({ pid: await deadPid(), start: 1 }),
    );
    const a = await recover();
    assert.equal(a.code, 0, dec.decode(a.stderr));
    assert.match(dec.decode(a.stdout), /^recovered: killed$/m);
    assert.match(dec.decode(a.stdout), /1 recovered, 0 unrecorded/);
    Deno.mkdirSync(`${runs}/orphan`);
    Deno.writeTextFileSync(`${runs}/orphan/report.json`, "{}\n");
    const b = await recover();
    assert.equal(b.code, 1);
    assert.match(
      dec.decode(b.stdout),
      /unrecorded \(no marker; not appended\): orphan/,
    );
    assert.equal(readLedger(`${runs}/ledger.json`).blocks.length, 1);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

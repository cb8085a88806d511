/**
 * The census on Slurm: `deploy/slurm/census.sh` on a single-node cluster
 * brought up for this test alone by `deploy/slurm/single-node.sh` (its own
 * slurm.conf, state and spool directories, munge key and socket, free
 * ports), on the local fixture
 * list in four shards that each hold a server, writes the census the
 * unsharded run writes, apart from timing. A bad list fails every shard:
 * census.sh exits 1 with the end of each failed shard's log. Bad arguments
 * are one line, exit 2, before Slurm is asked anything. The daemons are
 * stopped by pid, and ps shows nothing of the cluster left. Skipped, with
 * the reason, where slurm-wlm is not installed (or not as root).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { assertSameCensus, LOCAL_LIST, readDoc } from "./_census.ts";
import { runVerity } from "./_verity.ts";

const SCRIPT = new URL("../deploy/slurm/census.sh", import.meta.url).pathname;
const SINGLE_NODE =
  new URL("../deploy/slurm/single-node.sh", import.meta.url).pathname;
const PROGRAMS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue"];

function onPath(cmd: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
    try {
      return Deno.statSync(join(dir, cmd)).isFile;
    } catch {
      return false;
    }
  });
}

const missing = PROGRAMS.filter((p) => !onPath(p));
const skip = missing.length > 0
  ? `${missing.join(", ")} not installed (apt-get install -y slurm-wlm)`
  : Deno.uid() !== 0
  ? "a cluster needs root (slurmd runs jobs as their users)"
  : null;
if (skip !== null) console.warn(`slurm_census_test: SKIPPED: ${skip}`);

async function run(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(cmd, {
    args,
    env: { NO_COLOR: "1", ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: r.code, out: dec.decode(r.stdout), err: dec.decode(r.stderr) };
}

/**
 * deploy/slurm/single-node.sh: a private cluster in `dir` (its own
 * slurm.conf, munge key and socket, state, spool, free ports), stopped by
 * its pid files.
 */
class SlurmCluster {
  readonly env: Record<string, string>;
  readonly #dir: string;

  constructor(dir: string) {
    this.#dir = dir;
    this.env = { SLURM_CONF: join(dir, "slurm.conf") };
  }

  /** Start it (a failed start stops what it started). */
  async start(): Promise<void> {
    const r = await run(SINGLE_NODE, ["start", this.#dir]);
    assert.equal(r.code, 0, r.out + r.err);
    assert.equal(r.out, `export SLURM_CONF=${this.env.SLURM_CONF}\n`);
  }

  async stop(): Promise<void> {
    try {
      await Deno.stat(this.env.SLURM_CONF!);
    } catch {
      return; // never written
    }
    const r = await run(SINGLE_NODE, ["stop", this.#dir]);
    assert.equal(r.code, 0, r.out + r.err);
  }

  /** Processes (`ps e`) whose environment names this cluster's slurm.conf. */
  async processes(): Promise<string[]> {
    const r = await run("ps", ["-e", "e", "-ww", "-o", "pid=,args="]);
    const mark = `SLURM_CONF=${this.env.SLURM_CONF}`;
    return r.out.split("\n").filter((l) =>
      l.includes(`${mark} `) || l.endsWith(mark)
    ).map((l) => l.trim().slice(0, 100));
  }
}

Deno.test("census.sh and single-node.sh: bad arguments are one line, exit 2, before Slurm is asked", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "verity-slurm-args-" });
  try {
    const full = join(tmp, "full");
    await Deno.mkdir(full);
    await Deno.writeTextFile(join(full, "x"), "");
    const cases: [string, string[], RegExp][] = [
      [
        SCRIPT,
        [LOCAL_LIST, "4"],
        /expected 3 arguments and an optional --behavior, got 2 \(usage: /,
      ],
      [
        SCRIPT,
        [LOCAL_LIST, "4", "o", "--behaviour"],
        /expected 3 arguments and an optional --behavior, got 4 \(usage: /,
      ],
      [
        SCRIPT,
        [join(tmp, "none.toml"), "4", "o"],
        /list .*none\.toml: not a readable/,
      ],
      [SCRIPT, [LOCAL_LIST, "0", "o"], /shards 0: expected a whole number/],
      [
        SCRIPT,
        [LOCAL_LIST, "1/4", "o"],
        /shards 1\/4: expected a whole number/,
      ],
      [
        SCRIPT,
        [LOCAL_LIST, "4", "a%a"],
        /out a%a: a path with %, \\ or a control/,
      ],
      [SCRIPT, [LOCAL_LIST, "4", "a\nb"], /out \$'a\\nb': a path with %/],
      [SCRIPT, [LOCAL_LIST, "4", full], /exists and is not an empty directory/],
      [SINGLE_NODE, ["begin", "o"], /usage: .* start\|stop <dir>/],
      [SINGLE_NODE, ["start", "o p"], /dir o\\ p: use letters, digits/],
      [SINGLE_NODE, ["start", full], /exists and is not an empty directory/],
      [SINGLE_NODE, ["stop", "o"], /o holds no cluster \(no slurm\.conf\)/],
    ];
    for (const [script, args, re] of cases) {
      // A Slurm that cannot be reached: the argument error comes first.
      const r = await run(script, args, {
        cwd: tmp,
        env: { SLURM_CONF: join(tmp, "no-slurm.conf") },
      });
      assert.equal(r.code, 2, `${args}: ${r.err}`);
      assert.equal(r.err.trim().split("\n").length, 1, r.err);
      assert.match(r.err, re);
      await assert.rejects(Deno.stat(join(tmp, "o")), Deno.errors.NotFound);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test({
  name:
    "census.sh on a single-node Slurm: four shards as a job array, an afterok merge, equal to the unsharded census; a failed shard is exit 1 with its log",
  ignore: skip !== null,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "verity-slurm-" });
    await Deno.chmod(tmp, 0o755); // munged: every directory above its socket searchable
    const cluster = new SlurmCluster(join(tmp, "cluster"));
    try {
      await cluster.start();
      // The daemons (munged, slurmctld and its slurmscriptd, slurmd) carry
      // the cluster's SLURM_CONF, so ps can tell them apart.
      assert.ok((await cluster.processes()).length >= 4);
      const env = {
        ...cluster.env,
        PATH: `${join(Deno.execPath(), "..")}:${Deno.env.get("PATH")}`,
      };
      // Quoting: the results go to a directory a shell would misread.
      const out = join(tmp, `out $x;'"\`y\``);
      const t0 = performance.now();
      const [slurm, whole] = await Promise.all([
        run(SCRIPT, [LOCAL_LIST, "4", out], { cwd: tmp, env }),
        runVerity(["census", LOCAL_LIST, "--out", join(tmp, "whole")]),
      ]);
      const ms = performance.now() - t0;
      assert.equal(slurm.code, 0, slurm.out + slurm.err);
      assert.equal(whole.code, 0, whole.stderr);
      assert.match(slurm.out, /job array \d+ \(4 tasks\); merge: job \d+/);
      assert.ok(slurm.out.endsWith(`merged census in ${out}/census\n`));
      const doc = await readDoc(join(out, "census"));
      assert.deepEqual(doc.run.shards.map((s) => `${s.shard}:${s.servers}`), [
        "1/4:1",
        "2/4:1",
        "3/4:1",
        "4/4:2",
      ]);
      await assertSameCensus(join(out, "census"), join(tmp, "whole"));
      console.log(
        `slurm census of the local list, 4 shards: ${
          (ms / 1000).toFixed(1)
        } s from submission to merge; shards ${
          doc.run.shards.map((s) => `${s.seconds} s`).join(", ")
        }`,
      );

      // A list every shard refuses: each task fails, the merge is
      // cancelled (afterok), census.sh shows each failed shard's log.
      const bad = join(tmp, "bad.toml");
      await Deno.writeTextFile(
        bad,
        'name = "x"\n[[servers]]\npackage = "a"\nversion = "latest"\n',
      );
      const failed = await run(SCRIPT, [bad, "2", join(tmp, "bad-out")], {
        cwd: tmp,
        env,
      });
      assert.equal(failed.code, 1, failed.out + failed.err);
      for (const k of [1, 2]) {
        assert.match(
          failed.err,
          new RegExp(
            `shard ${k}/2 failed; the end of .*shard-${k}\\.log:\\n` +
              `.*bad\\.toml: servers\\[0\\]\\.version: must be an exact version`,
          ),
        );
      }
      await assert.rejects(
        Deno.stat(join(tmp, "bad-out", "census")),
        Deno.errors.NotFound,
      );
      const queue = await run("squeue", ["--noheader"], { env });
      assert.equal(queue.out, "", "nothing left in the queue");
    } finally {
      await cluster.stop();
      const left = await cluster.processes();
      await Deno.remove(tmp, { recursive: true });
      assert.deepEqual(left, [], "no process of the cluster outlives it");
    }
  },
});

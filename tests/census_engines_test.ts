/**
 * The census on existing engines: the GitHub Actions workflow
 * (.github/workflows/census.yml) and the Kubernetes Indexed Job
 * (deploy/census-job.yaml, deploy/census-merge-job.yaml) parse, agree on
 * their shard count, and their own shell commands, run here on the local
 * fixture list as the engine would run them (one shard per matrix entry or
 * completion index, then the merge), produce a merged census whose ledger
 * verifies. No network: the fixture list has no published packages.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";

const ROOT = new URL("..", import.meta.url).pathname;
const LIST = new URL("./data/census/local.toml", import.meta.url).pathname;

interface Step {
  name?: string;
  run?: string;
  uses?: string;
}

/** Run a shell script in `cwd` with `env`; fail with its output otherwise. */
async function sh(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<string> {
  const out = await new Deno.Command("bash", {
    args: ["-e", "-c", script],
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `${script}\n${text}`);
  return text;
}

/** A directory whose ./verity runs this checkout's launcher (the engines' working directory). */
async function workDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "verity-census-engine-" });
  await Deno.writeTextFile(
    join(dir, "verity"),
    `#!/bin/sh\nexec "${ROOT}verity" "$@"\n`,
  );
  await Deno.chmod(join(dir, "verity"), 0o755);
  return dir;
}

async function checkMerged(dir: string): Promise<void> {
  const doc = JSON.parse(await Deno.readTextFile(join(dir, "census.json")));
  assert.equal(doc.servers.length, 5);
  assert.equal(doc.run.shards.length, 4);
  // Each shard's own count: a merge of one full shard with empty ones
  // would prove little.
  const nonEmpty = doc.run.shards.filter((s: { servers: number }) =>
    s.servers > 0
  );
  assert.ok(nonEmpty.length >= 2, JSON.stringify(doc.run.shards));
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${ROOT}main.ts`,
      "ledger",
      "verify",
      "--ledger",
      join(dir, "ledger.json"),
      "--expected-head",
      doc.run.ledgerHead,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stdout));
}

Deno.test("census workflow: a matrix over SHARDS shards, artifacts, a merge job; its commands run as written", async () => {
  const wf = parse(
    await Deno.readTextFile(`${ROOT}.github/workflows/census.yml`),
  ) as {
    env: Record<string, string>;
    jobs: Record<string, {
      needs?: string;
      strategy?: { matrix: { shard: number[] } };
      steps: Step[];
    }>;
  };
  const shards = Number(wf.env.SHARDS);
  const shardJob = wf.jobs.shard!;
  assert.deepEqual(
    shardJob.strategy!.matrix.shard,
    Array.from({ length: shards }, (_, i) => i + 1),
    "the matrix lists shards 1..SHARDS",
  );
  assert.equal(wf.jobs.merge!.needs, "shard");
  assert.ok(
    shardJob.steps.some((s) => s.uses?.startsWith("actions/upload-artifact")),
  );
  assert.ok(
    wf.jobs.merge!.steps.some((s) =>
      s.uses?.startsWith("actions/download-artifact")
    ),
  );
  const runs = (steps: Step[]) =>
    steps.filter((s) => s.run?.includes("./verity census")).map((s) => s.run!);
  const dir = await workDir();
  try {
    const expr = (script: string, shard: number) =>
      script.replaceAll("${{ inputs.list }}", LIST)
        .replaceAll("${{ matrix.shard }}", String(shard))
        .replaceAll("${{ inputs.jobs }}", "2");
    const env = { SHARDS: String(shards) };
    const shardSteps = runs(shardJob.steps);
    assert.equal(shardSteps.length, 2, "prepare, then the census");
    await Promise.all(
      shardJob.strategy!.matrix.shard.map(async (k) => {
        for (const s of shardSteps) await sh(expr(s, k), dir, env);
        // upload-artifact / download-artifact: shard-k -> shards/census-shard-k
        await Deno.mkdir(join(dir, "shards"), { recursive: true });
        await Deno.rename(
          join(dir, `out/shard-${k}`),
          join(dir, `shards/census-shard-${k}`),
        );
      }),
    );
    const merge = runs(wf.jobs.merge!.steps);
    assert.equal(merge.length, 1);
    await sh(merge[0]!, dir, env);
    await checkMerged(join(dir, "census"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("census Kubernetes Indexed Job: JOB_COMPLETION_INDEX is the shard; its scripts run as written", async () => {
  const docs = parseAllDocuments(
    await Deno.readTextFile(`${ROOT}deploy/census-job.yaml`),
  ).map((d) => {
    assert.deepEqual(d.errors, []);
    return d.toJS();
  });
  const job = docs.find((d) => d.kind === "Job");
  assert.equal(job.spec.completionMode, "Indexed");
  const c = job.spec.template.spec.containers[0];
  const shards = Number(
    c.env.find((e: { name: string }) => e.name === "SHARDS").value,
  );
  assert.equal(job.spec.completions, shards);
  assert.equal(job.spec.parallelism, shards);
  const script: string = c.args[0];
  assert.match(script, /JOB_COMPLETION_INDEX/);
  assert.ok(docs.some((d) => d.kind === "ConfigMap"));
  const merge = parse(
    await Deno.readTextFile(`${ROOT}deploy/census-merge-job.yaml`),
  );
  assert.equal(merge.kind, "Job");
  const mergeScript: string = merge.spec.template.spec.containers[0].args[0];
  const dir = await workDir();
  try {
    const local = (s: string) =>
      s.replaceAll("/list/list.toml", LIST).replaceAll("/out", `${dir}/out`);
    await Promise.all(
      Array.from(
        { length: shards },
        (_, i) =>
          sh(local(script), dir, {
            SHARDS: String(shards),
            JOB_COMPLETION_INDEX: String(i),
          }),
      ),
    );
    await sh(local(mergeScript), dir, {});
    await checkMerged(join(dir, "out/census"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

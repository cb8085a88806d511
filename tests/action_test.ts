/**
 * The composite action end to end: every `run:` step of action.yml, in
 * order, with its `env:` expressions filled in as GitHub would (inputs with
 * their defaults, `github.action_path`, the `run` step's outputs), in a
 * temporary git repository holding a server author's own targets (no
 * `[source]`): one that violates a claim and one that does not. The `uses:`
 * steps (setup-deno, upload-sarif) are not run here. Checks every output
 * file, the outputs, the job summary and the exit code, that no host
 * setting is changed unless an input asks, and that prepare runs only for a
 * definition with a `[source]`.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";

const ROOT = new URL("..", import.meta.url).pathname;

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
}

const ACTION = parse(await Deno.readTextFile(`${ROOT}action.yml`)) as {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};

/** A fixture's server as a target of the repository (no expectations, no [source]). */
async function addTarget(repo: string, fixture: string, as: string) {
  const dir = `${repo}/targets/${as}`;
  await Deno.mkdir(dir, { recursive: true });
  for (const f of ["server.ts", "seed.sql"]) {
    await Deno.copyFile(`${ROOT}fixtures/${fixture}/${f}`, `${dir}/${f}`);
  }
  let skip = false;
  const toml = (await Deno.readTextFile(
    `${ROOT}fixtures/${fixture}/fixture.toml`,
  )).split("\n").filter((l) => {
    if (l.startsWith("[")) skip = l.startsWith("[tools.expected");
    return !skip;
  }).join("\n").replace("[fixture]", "[target]");
  await Deno.writeTextFile(`${dir}/target.toml`, toml);
}

/** A temporary repository with two targets and the shared fixture helpers. */
async function makeRepo(): Promise<string> {
  await Deno.mkdir(`${ROOT}.verity`, { recursive: true });
  // inside the checkout: the servers import through its deno.json
  const repo = await Deno.makeTempDir({
    dir: `${ROOT}.verity`,
    prefix: "action-repo-",
  });
  await Deno.chmod(repo, 0o755); // as root the server runs as uid 65534
  await Deno.mkdir(`${repo}/targets/_shared`, { recursive: true });
  for await (const e of Deno.readDir(`${ROOT}fixtures/_shared`)) {
    if (e.isFile) {
      await Deno.copyFile(
        `${ROOT}fixtures/_shared/${e.name}`,
        `${repo}/targets/_shared/${e.name}`,
      );
    }
  }
  await addTarget(repo, "liar-readonly", "liar");
  await addTarget(repo, "honest-readonly", "honest");
  for (
    const args of [
      ["init", "-q"],
      ["add", "-A"],
      [
        "-c",
        "user.email=ci@example.org",
        "-c",
        "user.name=ci",
        "commit",
        "-qm",
        "targets",
      ],
    ]
  ) {
    const r = await new Deno.Command("git", { args, cwd: repo }).output();
    assert.equal(r.code, 0, `git ${args.join(" ")}`);
  }
  return repo;
}

interface ActionRun {
  /** Exit code of the first step that failed, or 0. */
  code: number;
  outputs: Record<string, string>;
  summary: string;
  log: string;
  /** What the fake sudo was asked to do. */
  sudo: string;
  skipped: string[];
}

/** Fill `${{ ... }}` as GitHub would for this action. */
function expand(
  text: string,
  inputs: Record<string, string>,
  outputs: Record<string, string>,
  actionPath: string,
): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input) return inputs[input[1]!] ?? "";
    const out = /^steps\.run\.outputs\.([\w-]+)$/.exec(expr);
    if (out) return outputs[out[1]!] ?? "";
    if (expr === "github.action_path") return actionPath;
    if (expr === "github.server_url") return "https://github.com";
    if (expr.startsWith("github.")) return "";
    throw new Error(`action.yml: no value for \${{ ${expr} }}`);
  });
}

async function runAction(
  repo: string,
  given: Record<string, string>,
  fakeBwrapFails = false,
  actionPath = ROOT.replace(/\/$/, ""),
): Promise<ActionRun> {
  const inputs: Record<string, string> = {};
  for (const [k, v] of Object.entries(ACTION.inputs)) {
    inputs[k] = v.default ?? "";
  }
  Object.assign(inputs, given);
  const tmp = await Deno.makeTempDir();
  const bin = `${tmp}/bin`;
  await Deno.mkdir(bin);
  // sudo records what it is asked and does nothing
  await Deno.writeTextFile(
    `${bin}/sudo`,
    `#!/bin/sh\necho "$*" >> ${tmp}/sudo.log\n`,
    { mode: 0o755 },
  );
  if (fakeBwrapFails) {
    await Deno.writeTextFile(`${bin}/bwrap`, "#!/bin/sh\nexit 1\n", {
      mode: 0o755,
    });
  }
  const ghOutput = `${tmp}/github_output`;
  const summary = `${tmp}/step_summary`;
  await Deno.writeTextFile(ghOutput, "");
  await Deno.writeTextFile(summary, "");
  await Deno.writeTextFile(`${tmp}/sudo.log`, "");
  const outputs: Record<string, string> = {};
  const skipped: string[] = [];
  let log = "";
  let code = 0;
  for (const step of ACTION.runs.steps) {
    if (step.uses) {
      skipped.push(step.uses);
      continue;
    }
    const env: Record<string, string> = {
      PATH: `${bin}:${Deno.env.get("PATH")}`,
      HOME: Deno.env.get("HOME") ?? "/root",
      GITHUB_OUTPUT: ghOutput,
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_WORKSPACE: repo,
      NO_COLOR: "1",
    };
    for (const [k, v] of Object.entries(step.env ?? {})) {
      env[k] = expand(String(v), inputs, outputs, actionPath);
    }
    // GitHub's `shell: bash`
    const r = await new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run!],
      cwd: repo,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    log += `== ${step.name ?? step.id}\n${new TextDecoder().decode(r.stdout)}${
      new TextDecoder().decode(r.stderr)
    }`;
    for (const line of (await Deno.readTextFile(ghOutput)).split("\n")) {
      const eq = line.indexOf("=");
      if (eq > 0) outputs[line.slice(0, eq)] = line.slice(eq + 1);
    }
    if (r.code !== 0) {
      code = r.code;
      break;
    }
  }
  const result = {
    code,
    outputs,
    summary: await Deno.readTextFile(summary),
    log,
    sudo: await Deno.readTextFile(`${tmp}/sudo.log`),
    skipped,
  };
  await Deno.remove(tmp, { recursive: true });
  return result;
}

Deno.test("action: a violating and a clean target in a repository: every output file, the outputs, the summary, exit 1", async () => {
  const repo = await makeRepo();
  try {
    const a = await runAction(repo, {
      // a path to a .toml and a directory: both forms
      definition: "targets/liar/target.toml targets/honest",
    });
    assert.equal(a.code, 1, a.log);
    assert.deepEqual(a.skipped, [
      "denoland/setup-deno@v2",
      "github/codeql-action/upload-sarif@v4",
    ]);
    // no [source]: prepare is not run (it would exit 2)
    assert.doesNotMatch(a.log, /verity prepare|nothing to fetch/);
    assert.equal(a.outputs.violations, "1", a.log);
    assert.equal(a.outputs.untested, "0", a.log);
    assert.equal(a.outputs.rc, "1");
    assert.match(
      a.log,
      /gate --fail-on-violation failed: 1 violation\(s\) \(get_item read_only\)/,
    );
    assert.match(a.log, /::error::verity exited 1/);
    const out = `${repo}/${a.outputs["reports-dir"]}`;
    assert.equal(a.outputs["reports-dir"], "verity-reports");
    // one report per definition, both named in the output
    const reports = a.outputs.report!.split(" ");
    assert.equal(reports.length, 2);
    for (const r of reports) {
      assert.ok(r.startsWith(`${repo}/verity-reports/runs/`), r);
      assert.ok((await Deno.stat(r)).isFile, r);
    }
    // unique files per definition
    const files = [...Deno.readDirSync(out)].map((e) => e.name).sort();
    for (const name of ["targets-liar", "targets-honest"]) {
      for (const ext of ["sarif", "junit.xml", "html", "md", "log"]) {
        assert.ok(files.includes(`${name}.${ext}`), `${name}.${ext}: ${files}`);
      }
    }
    assert.ok(files.includes("runs"));
    const sarif = (name: string) =>
      JSON.parse(Deno.readTextFileSync(`${out}/${name}.sarif`)).runs[0];
    const liar = sarif("targets-liar");
    const honest = sarif("targets-honest");
    assert.deepEqual(
      liar.results.map((r: { ruleId: string; level: string }) =>
        `${r.ruleId} ${r.level}`
      ),
      ["read_only error"],
    );
    assert.deepEqual(honest.results, []);
    // one category each, relative locations
    assert.notEqual(liar.automationDetails.id, honest.automationDetails.id);
    assert.match(
      liar.automationDetails.id,
      /^verity\/targets\/liar\/target\.toml\//,
    );
    assert.deepEqual(
      liar.results[0].locations[0].physicalLocation.artifactLocation,
      { uri: "targets/liar/target.toml", uriBaseId: "%SRCROOT%" },
    );
    const junit = Deno.readTextFileSync(`${out}/targets-liar.junit.xml`);
    assert.match(
      junit,
      /<failure message="get_item readOnlyHint: true, but observed read_only=fails" type="VIOLATION">/,
    );
    assert.match(junit, /<testcase [^>]*time="\d+\.\d{3}"/);
    assert.match(
      Deno.readTextFileSync(`${out}/targets-liar.html`),
      /<article class="finding f-violation">/,
    );
    // the job summary: each definition's headline and findings table
    assert.match(a.summary, /^### verity: liar-readonly$/m);
    assert.match(a.summary, /^### verity: honest-readonly$/m);
    assert.match(
      a.summary,
      /^\*\*claims:\*\* 2 claims: 1 held, 1 violated, 0 untested/m,
    );
    assert.match(
      a.summary,
      /^\| VIOLATION \| get\\_item \| read\\_only \| readOnlyHint: true \| calling get\\_item /m,
    );
    assert.match(a.summary, /No violation and no untested claim\./);
    // no host setting changed (bubblewrap works here: nothing to lift)
    assert.equal(a.sudo, "");
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("action: a clean target passes; a restricted kernel is not changed unless allow-user-namespaces asks", async () => {
  const repo = await makeRepo();
  try {
    const a = await runAction(repo, { definition: "targets/honest" }, true);
    assert.equal(a.code, 0, a.log);
    assert.equal(a.outputs.violations, "0");
    assert.equal(a.outputs.rc, "0");
    assert.equal(a.sudo, "", "no sudo without allow-user-namespaces");
    assert.match(
      a.log,
      /::warning::bubblewrap cannot create user namespaces here.*allow-user-namespaces/,
    );
    // a fixture suite (audit: false) of the checkout's own fixture, for contrast
    const suite = await runAction(ROOT, {
      definition: "liar-readonly",
      audit: "false",
      "reports-dir": `${repo}/suite`,
    });
    assert.equal(suite.code, 0, suite.log);
    assert.equal(suite.outputs.rc, "0");
    assert.ok(Deno.statSync(`${repo}/suite/liar-readonly.sarif`).isFile);
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("action: inputs and outputs the docs promise", () => {
  for (
    const i of [
      "fail-on-violation",
      "fail-on-untested",
      "include-destructive",
      "allow-low-coverage",
      "allow-user-namespaces",
      "prepare",
    ]
  ) assert.ok(ACTION.inputs[i], `input ${i}`);
  assert.equal(ACTION.inputs.prepare!.default, "auto");
  assert.equal(ACTION.inputs["allow-user-namespaces"]!.default, "false");
  for (const o of ["violations", "untested", "report", "reports-dir"]) {
    assert.match(ACTION.outputs[o]!.value, /steps\.run\.outputs\./, o);
  }
  const uses = ACTION.runs.steps.flatMap((s) => s.uses ? [s.uses] : []);
  assert.ok(uses.includes("github/codeql-action/upload-sarif@v4"));
  // sysctl only behind the input
  const prereq = ACTION.runs.steps.find((s) => s.run?.includes("sysctl"))!;
  assert.match(prereq.run!, /if \[ "\$ALLOW_USERNS" = "true" \]/);
});

Deno.test("action: prepare runs only for a definition with a [source] (auto), always with true, never with false", async () => {
  const repo = await makeRepo();
  const fake = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${repo}/targets/honest/target.toml`,
      (await Deno.readTextFile(`${repo}/targets/honest/target.toml`)) +
        '\n[source] # pinned\npackage = "x"\n',
    );
    // a verity that records what the action asks of it
    await Deno.writeTextFile(
      `${fake}/verity`,
      `#!/bin/sh\necho "$1 $2" >> ${fake}/calls\n`,
      { mode: 0o755 },
    );
    const calls = async (prepare: string) => {
      await Deno.writeTextFile(`${fake}/calls`, "");
      await runAction(
        repo,
        { definition: "targets/liar targets/honest/target.toml", prepare },
        false,
        fake,
      );
      return (await Deno.readTextFile(`${fake}/calls`)).trim().split("\n");
    };
    assert.deepEqual(await calls("auto"), [
      "run targets/liar",
      "prepare targets/honest/target.toml",
      "run targets/honest/target.toml",
    ]);
    assert.deepEqual(await calls("false"), [
      "run targets/liar",
      "run targets/honest/target.toml",
    ]);
    assert.deepEqual(await calls("true"), [
      "prepare targets/liar",
      "run targets/liar",
      "prepare targets/honest/target.toml",
      "run targets/honest/target.toml",
    ]);
  } finally {
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(fake, { recursive: true });
  }
});

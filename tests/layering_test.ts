/**
 * The layering of the code, checked on the real import graph
 * (`deno info --json` of every module under lib/, adapters/ and main.ts):
 *
 * - no import cycle anywhere (type-only imports count: a cycle of types is
 *   still a knot);
 * - pure modules (contracts, the state model and delta, verdicts, contract
 *   hashing, reality rules and argument generation, renderers, plans) use
 *   no `Deno.*`, clock or randomness in their own source and reach, through
 *   imports that run code, no module that does and no external module not
 *   known to be pure.
 *
 * Each failure names the offending import. The checks themselves are proved
 * able to fail on synthetic graphs below.
 */
import assert from "node:assert/strict";
import {
  effectsInSource,
  findCycles,
  graphFromDenoInfo,
  layeringProblems,
  type ModuleGraph,
  stripComments,
} from "./_layering.ts";

const ROOT = new URL("../", import.meta.url);

/** Pure modules: folders (ending in `/`) or single files. */
const PURE = [
  "lib/prepare/provenance.ts",
  "lib/common/is_plain_object.ts",
  "lib/common/paths.ts",
  "lib/common/show_controls.ts",
  "lib/census/bin.ts",
  "lib/census/html.ts",
  "lib/census/list.ts",
  "lib/common/pool.ts",
  "lib/census/result.ts",
  "lib/census/shard.ts",
  "lib/contracts/",
  "lib/definition/_reader.ts",
  "lib/definition/parse.ts",
  "lib/definition/placeholders.ts",
  "lib/definition/types.ts",
  "lib/errors.ts",
  "lib/evidence/canonical.ts",
  "lib/evidence/chain.ts",
  "lib/evidence/checks.ts",
  "lib/evidence/privilege_scope.ts",
  "lib/evidence/diff.ts",
  "lib/evidence/manifest.ts",
  "lib/evidence/recipes.ts",
  "lib/guard/audited.ts",
  "lib/guard/listing.ts",
  "lib/guard/policy.ts",
  "lib/history/",
  "lib/launcher/request.ts",
  "lib/reality/_generate_context.ts",
  "lib/reality/_generate_number.ts",
  "lib/reality/_generate_string.ts",
  "lib/reality/_generate_value.ts",
  "lib/reality/_schema_resolve.ts",
  "lib/reality/formats.ts",
  "lib/reality/generate.ts",
  "lib/reality/name_hints.ts",
  "lib/reality/pattern.ts",
  "lib/reality/plan.ts",
  "lib/reality/prng.ts",
  "lib/reality/refusal.ts",
  "lib/reality/render.ts",
  "lib/reality/rules.ts",
  "lib/reality/schema_validate.ts",
  "lib/reality/score.ts",
  "lib/report/_html_evidence.ts",
  "lib/report/_provenance_text.ts",
  "lib/report/_html_parts.ts",
  "lib/report/_html_sections.ts",
  "lib/report/_markup.ts",
  "lib/report/claims.ts",
  "lib/report/over_declarations.ts",
  "lib/report/build.ts",
  "lib/report/effects.ts",
  "lib/report/expectations.ts",
  "lib/report/html.ts",
  "lib/report/junit.ts",
  "lib/report/observed.ts",
  "lib/report/pack.ts",
  "lib/report/sarif.ts",
  "lib/report/text.ts",
  "lib/report/findings.ts",
  "lib/report/markdown.ts",
  "lib/report/_html_matrix.ts",
  "lib/report/_html_svg.ts",
  "lib/runner/group.ts",
  "lib/runner/plan.ts",
  "lib/sandbox/build_launch.ts",
  "lib/sandbox/cause.ts",
  "lib/state/",
  "lib/state_io/seed_guard.ts",
  "lib/verdicts/",
  "lib/version.ts",
  "lib/wire/bound.ts",
  "lib/wire/frames.ts",
  "lib/wire/lines.ts",
  "lib/wire/redact.ts",
  "lib/wire/sse.ts",
];

/** External modules that do no I/O of their own. */
const PURE_EXTERNAL = [
  /^node:buffer$/,
  // Hashing (createHash); its random functions are caught by the source scan.
  /^node:crypto$/,
  /^node:path$/,
  /^npm:ajv@/,
  /^npm:ajv-formats@/,
  /^npm:smol-toml@/,
];

function isPure(name: string): boolean {
  if (name.endsWith("_test.ts")) return false;
  return PURE.some((p) => p.endsWith("/") ? name.startsWith(p) : name === p);
}

const isLocal = (name: string) => !/^[a-z]+:/.test(name);

async function run(args: string[]): Promise<string> {
  const out = await new Deno.Command(args[0]!, {
    args: args.slice(1),
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return text;
}

/** Every non-test `.ts` file below `dir` (repository-relative), sorted. */
async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(new URL(dir + "/", ROOT))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) out.push(...await tsFiles(path));
    else if (e.isFile && path.endsWith(".ts") && !path.endsWith("_test.ts")) {
      out.push(path);
    }
  }
  return out.sort();
}

/** The real graph: `deno info --json` from main.ts, then from every module not yet reached. */
async function realGraph(): Promise<{ graph: ModuleGraph; files: string[] }> {
  const files = ["main.ts"];
  for (const dir of ["lib", "adapters"]) files.push(...await tsFiles(dir));
  const rootUrl = ROOT.href.replace(/\/$/, "");
  const infos: unknown[] = [];
  const covered = new Set<string>();
  for (const f of ["main.ts", ...files]) {
    if (covered.has(f)) continue;
    const info = JSON.parse(
      await run([Deno.execPath(), "info", "--json", f]),
    ) as { modules: { specifier: string }[] };
    infos.push(info);
    for (const m of info.modules) {
      if (m.specifier.startsWith(rootUrl + "/")) {
        covered.add(m.specifier.slice(rootUrl.length + 1));
      }
    }
  }
  return { graph: graphFromDenoInfo(infos, rootUrl), files };
}

const { graph, files } = await realGraph();

Deno.test("layering: the graph covers every module of lib/, adapters/ and main.ts", () => {
  const missing = files.filter((f) => !graph.has(f));
  assert.deepEqual(missing, []);
  assert.ok(graph.size >= files.length, `${graph.size} < ${files.length}`);
});

Deno.test("layering: every listed pure module exists", () => {
  for (const p of PURE) {
    assert.ok(
      files.some((f) => p.endsWith("/") ? f.startsWith(p) : f === p),
      `${p} is listed as pure but no such module`,
    );
  }
});

Deno.test("layering: no import cycle in lib/, adapters/ and main.ts", () => {
  const cycles = findCycles(graph, { include: isLocal });
  assert.deepEqual(
    cycles.map((c) => c.join(" -> ")),
    [],
    "import cycles (one closed path of imports per knot; cut one import of it)",
  );
});

Deno.test("layering: every lib folder has a mod.ts face of module doc and re-exports only", async () => {
  const folders = new Set(
    files.filter((f) => /^lib\/[^/]+\//.test(f)).map((f) =>
      f.split("/").slice(0, 2).join("/")
    ),
  );
  const problems: string[] = [];
  for (const folder of [...folders, "adapters"].sort()) {
    const face = `${folder}/mod.ts`;
    let source: string;
    try {
      source = await Deno.readTextFile(new URL(face, ROOT));
    } catch {
      problems.push(`${face} is missing`);
      continue;
    }
    if (!/^\/\*\*[\s\S]*?@module[\s\S]*?\*\//.test(source)) {
      problems.push(`${face} has no module doc`);
    }
    const code = stripComments(source).replace(
      /export\s+(\*|\*\s+as\s+\w+|(type\s+)?\{[^}]*\})\s+from\s+"[^"]+";/g,
      "",
    );
    if (code.trim() !== "") {
      problems.push(
        `${face} holds more than re-exports: ${code.trim().slice(0, 80)}`,
      );
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("layering: pure modules reach no effectful module", async () => {
  const effects = new Map<string, string[]>();
  for (const name of graph.keys()) {
    if (!isLocal(name)) continue;
    const source = await Deno.readTextFile(new URL(name, ROOT));
    effects.set(name, effectsInSource(source));
  }
  const problems = layeringProblems(graph, {
    isPure,
    effects,
    pureExternal: (n) => PURE_EXTERNAL.some((re) => re.test(n)),
  });
  assert.deepEqual(problems, []);
});

/**
 * The layers of docs/architecture.md, top first: a module may import its own
 * layer or a lower one. Folders end in `/`.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["main.ts"],
  ["lib/cli/"],
  ["lib/census/"],
  ["lib/report/"],
  ["lib/reality/", "lib/runner/", "lib/init/", "lib/guard/"],
  ["lib/launcher/", "lib/prepare/"],
  ["lib/verdicts/"],
  ["lib/history/"],
  ["lib/state_io/"],
  ["adapters/"],
  ["lib/state/"],
  ["lib/evidence/", "lib/sandbox/"],
  ["lib/definition/", "lib/wire/"],
  ["lib/contracts/", "lib/common/", "lib/errors.ts", "lib/version.ts"],
];

/** Imports allowed to go up a layer, each with its reason (none today). */
const UPWARD_EXCEPTIONS: ReadonlySet<string> = new Set([]);

/** The layer index of a module (0 is the top), or -1 when it is in no layer. */
function layerOf(name: string): number {
  return LAYERS.findIndex((layer) =>
    layer.some((p) => p.endsWith("/") ? name.startsWith(p) : name === p)
  );
}

function upwardImports(graph: ModuleGraph): string[] {
  const problems: string[] = [];
  for (const [name, m] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    if (!isLocal(name)) continue;
    const from = layerOf(name);
    for (const w of [...m.code, ...m.types].filter(isLocal)) {
      const to = layerOf(w);
      if (from === -1 || to === -1) {
        problems.push(`${from === -1 ? name : w} is in no layer`);
        continue;
      }
      if (to >= from) continue;
      const exempt = [...UPWARD_EXCEPTIONS].some((e) => {
        const [a, b] = e.split(" -> ");
        return a === name && w.startsWith(b!);
      });
      if (!exempt) {
        problems.push(
          `${name} (layer ${
            LAYERS[from]!.join(" ")
          }) imports ${w} from a higher layer (${LAYERS[to]!.join(" ")})`,
        );
      }
    }
  }
  return [...new Set(problems)];
}

Deno.test("layering: imports go down the layers of docs/architecture.md", () => {
  assert.deepEqual(files.filter((f) => layerOf(f) === -1), [], "in no layer");
  assert.deepEqual(upwardImports(graph), []);
  assert.equal(UPWARD_EXCEPTIONS.size, 0, "no import up a layer is excused");
});

/** The top folder of a module (`lib/verdicts/` for `lib/verdicts/checks/x.ts`). */
function folderOf(name: string): string {
  const parts = name.split("/");
  return parts[0] === "lib" && parts.length > 2
    ? `lib/${parts[1]}/`
    : `${parts[0]}/`;
}

/** Imports of another folder's private `_name.ts` file. */
function privateImports(graph: ModuleGraph): string[] {
  const problems: string[] = [];
  for (const [name, m] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    if (!isLocal(name)) continue;
    for (const w of [...m.code, ...m.types].filter(isLocal)) {
      const base = w.split("/").pop()!;
      if (base.startsWith("_") && folderOf(w) !== folderOf(name)) {
        problems.push(`${name} imports ${w}, private to ${folderOf(w)}`);
      }
    }
  }
  return [...new Set(problems)];
}

Deno.test("errors: only the command line throws UsageError; libraries throw domain errors", async () => {
  const offenders: string[] = [];
  for (const f of files) {
    if (f === "main.ts" || f.startsWith("lib/cli/") || f === "lib/errors.ts") {
      continue;
    }
    const src = stripComments(await Deno.readTextFile(new URL(f, ROOT)));
    if (/\bUsageError\b/.test(src)) offenders.push(f);
  }
  assert.deepEqual(offenders, []);
});

Deno.test("layering: no module imports another folder's private _ file", () => {
  assert.deepEqual(privateImports(graph), []);
});

Deno.test("privateImports: names an import of another folder's _ file, not its own", () => {
  assert.deepEqual(
    privateImports(g({
      "lib/state_io/x.ts": ["adapters/_sqlite_table.ts", "lib/state_io/_w.ts"],
      "lib/verdicts/checks/a.ts": ["lib/verdicts/_observe.ts"],
    })),
    ["lib/state_io/x.ts imports adapters/_sqlite_table.ts, private to adapters/"],
  );
});

// The checks can fail: synthetic graphs.

Deno.test("upwardImports: names an import from a lower layer to a higher one", () => {
  const graph = g({
    "lib/state/delta.ts": ["lib/state_io/snapshot.ts", "lib/common/paths.ts"],
    "lib/state_io/snapshot.ts": ["lib/state/delta.ts"],
    "lib/state_io/seeded.ts": ["lib/state_io/snapshot.ts"],
    "lib/nowhere/x.ts": [],
    "lib/common/paths.ts": ["lib/nowhere/x.ts"],
  });
  assert.deepEqual(upwardImports(graph), [
    "lib/nowhere/x.ts is in no layer",
    "lib/state/delta.ts (layer lib/state/) imports lib/state_io/snapshot.ts from a higher layer (lib/state_io/)",
  ]);
});

function g(
  edges: Record<string, string[]>,
  types: Record<string, string[]> = {},
): ModuleGraph {
  const graph: ModuleGraph = new Map();
  for (const n of new Set([...Object.keys(edges), ...Object.keys(types)])) {
    graph.set(n, { code: edges[n] ?? [], types: types[n] ?? [] });
  }
  return graph;
}

Deno.test("findCycles: names a cycle of code imports as a closed path", () => {
  const graph = g({
    "lib/a.ts": ["lib/b.ts"],
    "lib/b.ts": ["lib/c.ts"],
    "lib/c.ts": ["lib/a.ts", "lib/d.ts"],
    "lib/d.ts": [],
  });
  assert.deepEqual(findCycles(graph), [[
    "lib/a.ts",
    "lib/b.ts",
    "lib/c.ts",
    "lib/a.ts",
  ]]);
  assert.deepEqual(findCycles(g({ "x.ts": ["x.ts"] })), [["x.ts", "x.ts"]]);
  assert.deepEqual(findCycles(g({ "a.ts": ["b.ts"], "b.ts": [] })), []);
});

Deno.test("findCycles: type-only imports close a cycle unless told otherwise", () => {
  const graph = g({ "a.ts": ["b.ts"], "b.ts": [] }, { "b.ts": ["a.ts"] });
  assert.deepEqual(findCycles(graph), [["a.ts", "b.ts", "a.ts"]]);
  assert.deepEqual(findCycles(graph, { types: false }), []);
});

Deno.test("layeringProblems: a pure module reaching Deno.* is named with its offending import", () => {
  const graph = g({
    "lib/report/html.ts": ["lib/report/_parts.ts"],
    "lib/report/_parts.ts": ["lib/runner/runner.ts"],
    "lib/runner/runner.ts": [],
    "lib/verdicts/engine.ts": ["npm:ajv@8.20.0"],
    "lib/verdicts/clock.ts": [],
    "lib/verdicts/types.ts": [],
    "lib/verdicts/uses_types.ts": ["lib/verdicts/types.ts"],
  }, { "lib/verdicts/types.ts": ["lib/runner/runner.ts"] });
  const effects = new Map<string, string[]>([
    ["lib/runner/runner.ts", effectsInSource("await Deno.readFile(p);")],
    ["lib/verdicts/clock.ts", effectsInSource("const t = Date.now();")],
  ]);
  const problems = layeringProblems(graph, {
    isPure: (n) => !n.startsWith("lib/runner/"),
    effects,
    pureExternal: () => false,
  });
  assert.deepEqual(problems, [
    "pure lib/report/_parts.ts imports lib/runner/runner.ts and so reaches lib/runner/runner.ts (effectful: Deno.* (line 1)): lib/report/_parts.ts -> lib/runner/runner.ts",
    "pure lib/report/html.ts imports lib/report/_parts.ts and so reaches lib/runner/runner.ts (effectful: Deno.* (line 1)): lib/report/html.ts -> lib/report/_parts.ts -> lib/runner/runner.ts",
    "pure lib/verdicts/clock.ts is itself effectful: Date.now() (line 1)",
    "pure lib/verdicts/engine.ts imports npm:ajv@8.20.0 and so reaches npm:ajv@8.20.0 (an external module not known to be pure): lib/verdicts/engine.ts -> npm:ajv@8.20.0",
  ]);
});

Deno.test("effectsInSource: finds effects in code, not in comments or after them", () => {
  assert.deepEqual(
    effectsInSource(
      [
        "/** @example",
        " * await Deno.readFile('x');",
        " */",
        "// Date.now() in a comment",
        'const url = "https://example.com"; // Math.random()',
        "const t = performance.now();",
        "const id = crypto.randomUUID();",
        "const salt = randomBytes(16);",
      ].join("\n"),
    ),
    [
      "performance.now() (line 6)",
      "crypto randomness (line 7)",
      "node:crypto randomness (line 8)",
    ],
  );
  assert.equal(stripComments('a /* b */ "c // d" // e'), 'a         "c // d" ');
});

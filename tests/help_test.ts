import assert from "node:assert/strict";
import { COMMANDS, run } from "../main.ts";
import { COMMAND_HELP } from "../lib/cli/help.ts";
import { HelpRequested } from "../lib/cli/args.ts";
import { PREDICATE_TYPE } from "../lib/evidence/attest.ts";
import { DEFAULT_RECIPE } from "../lib/evidence/recipes.ts";
import { DEFAULT_SEED } from "../lib/reality/prng.ts";

/** What `f` prints with console.log, and what it returns. */
async function printed(
  f: () => Promise<number>,
): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void lines.push(a.join(" "));
  try {
    const code = await f();
    return { code, out: lines.join("\n") };
  } finally {
    console.log = log;
  }
}

const PUBLIC = Object.entries(COMMANDS).filter(([, c]) => !c.internal);

Deno.test("every public command has help text, and no other name does", () => {
  assert.deepEqual(
    Object.keys(COMMAND_HELP).sort(),
    PUBLIC.map(([n]) => n).sort(),
  );
});

for (const [name, cmd] of PUBLIC) {
  Deno.test(`verity ${name} --help prints its help, also from inside the command`, async () => {
    const fast = await printed(() => run([name, "--help"]));
    const short = await printed(() => run([name, "-h"]));
    assert.equal(fast.code, 0);
    assert.equal(fast.out, COMMAND_HELP[name as keyof typeof COMMAND_HELP]);
    assert.equal(short.out, fast.out);
    assert.match(fast.out, new RegExp(`^verity ${name}\\b`));
    // The command itself asks the entry to print it (one place for
    // --help), or, a dispatcher of subcommands, prints the same text.
    const mod = await cmd.load();
    try {
      const own = await printed(() => mod.main(["--help"]));
      assert.equal(own.code, 0);
      assert.equal(own.out, fast.out);
    } catch (e) {
      if (!(e instanceof HelpRequested)) throw e;
      assert.ok(e.command.startsWith(name), e.command);
    }
  });
}

Deno.test("help texts quote the defaults the commands use", () => {
  assert.ok(COMMAND_HELP.attest.includes(`predicate ${PREDICATE_TYPE}`));
  assert.ok(COMMAND_HELP.capture.includes(`(default ${DEFAULT_RECIPE})`));
  assert.ok(COMMAND_HELP.reality.includes(`(default ${DEFAULT_SEED})`));
});

Deno.test("main.ts loads no command module and no npm package before a command runs", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("../main.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(out.success);
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: {
      specifier: string;
      dependencies?: { isDynamic?: boolean; code?: { specifier: string } }[];
    }[];
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const todo = [...graph.roots];
  while (todo.length > 0) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    for (const d of bySpecifier.get(s)?.dependencies ?? []) {
      if (!d.isDynamic && d.code) todo.push(d.code.specifier);
    }
  }
  const staticGraph = [...seen];
  assert.ok(staticGraph.some((s) => s.endsWith("/lib/cli/help.ts")));
  assert.deepEqual(staticGraph.filter((s) => /_cmd\.ts$|^npm:/.test(s)), []);
  // The whole graph does hold them (loaded when a command runs).
  assert.ok(
    bySpecifier.has(new URL("../lib/cli/run_cmd.ts", import.meta.url).href),
  );
});

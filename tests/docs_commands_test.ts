/**
 * Every command shown in README.md and docs/ runs as written on a fresh
 * machine after the README's two set-up commands (`npx -y deno@2.9.6 task
 * demo|test`), which leave no `deno` on PATH: so shown commands use the
 * `./verity` launcher or `npx -y deno@2.9.6 ...`, never a bare `deno` or
 * `verity`, and every `./verity <command> --flag` names a command and flags
 * that its `--help` lists.
 */
import assert from "node:assert/strict";
import { registryReachable } from "./_verity.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** A command line shown in a document. */
export interface ShownCommand {
  file: string;
  line: number;
  text: string;
}

/** Fence languages whose lines are shell commands (or their output). */
const SHELL_FENCES = new Set(["", "bash", "sh", "console", "shell"]);

/**
 * The command lines of a markdown text: lines of shell (or untyped) fenced
 * blocks that start, unindented, with (`$ `) `deno`, `verity`, `./verity`, `npx` or
 * `scripts/`, continuation lines joined; and inline code spans that start
 * with `./verity `, `deno task` or `deno run <flag> scripts/|main.ts` (a bare
 * `verity <command>` in prose names a command; it is not a command line).
 */
export function shownCommands(file: string, text: string): ShownCommand[] {
  const out: ShownCommand[] = [];
  const lines = text.split("\n");
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? "";
    const m = /^\s*```(\w*)/.exec(raw);
    if (m) {
      fence = fence === null ? (m[1] ?? "") : null;
      continue;
    }
    if (fence !== null) {
      if (!SHELL_FENCES.has(fence)) continue;
      // indented lines are output (or continuations, joined below)
      if (/^\s/.test(raw)) continue;
      let cmd = raw.trim().replace(/^\$ /, "");
      if (!/^(deno|verity|\.\/verity|npx|scripts\/)(\s|$)/.test(cmd)) continue;
      // output lines such as "verity run: target ..." are not commands
      if (/^verity [\w-]+:/.test(cmd)) continue;
      const start = i;
      while (cmd.endsWith("\\") && i + 1 < lines.length) {
        i++;
        cmd = cmd.slice(0, -1).trimEnd() + " " + (lines[i] ?? "").trim();
      }
      out.push({ file, line: start + 1, text: stripComment(cmd) });
      continue;
    }
    for (const span of raw.matchAll(/`([^`]+)`/g)) {
      const s = span[1] ?? "";
      if (
        /^(\.\/verity \w|deno (task|run (-A|--allow-\w+) (scripts\/|main\.ts)))/
          .test(s)
      ) {
        out.push({ file, line: i + 1, text: s });
      }
    }
  }
  return out;
}

function stripComment(cmd: string): string {
  const at = cmd.search(/\s#\s/);
  return (at === -1 ? cmd : cmd.slice(0, at)).trim();
}

/** Why a shown command would not run on a fresh machine, or null. */
export function freshMachineProblem(cmd: string): string | null {
  if (/^deno\s/.test(cmd)) {
    return "bare `deno` is not on PATH after the set-up: use `npx -y deno@2.9.6 ...` or `./verity`";
  }
  if (/^deno task verity\b/.test(cmd)) return "use `./verity`";
  if (/^verity\s/.test(cmd)) {
    return "bare `verity` is not on PATH: use `./verity` (the launcher in the repository root)";
  }
  if (
    /^npx\s+(-y\s+)?deno(@\S*)?\s/.test(cmd) &&
    !/^npx -y deno@2\.9\.6 /.test(cmd)
  ) {
    return "pin the Deno version: `npx -y deno@2.9.6 ...`";
  }
  return null;
}

/** `./verity` commands: the subcommand (two words for `<x> verify`) and its flags before `--`. */
export function verityInvocation(
  cmd: string,
): { sub: string[]; flags: string[] } | null {
  const m = /^\.\/verity\s+(.*)$/.exec(cmd);
  if (!m) return null;
  const words = (m[1] ?? "").split(/\s+/);
  const dash = words.indexOf("--");
  const own = dash === -1 ? words : words.slice(0, dash);
  const first = own[0] ?? "";
  if (first.startsWith("-")) return { sub: [], flags: flagsOf(own) };
  const sub = [first];
  if (own[1] === "verify" || own[1] === "recover" || own[1] === "head") {
    sub.push(own[1]);
  }
  return { sub, flags: flagsOf(own) };
}

function flagsOf(words: string[]): string[] {
  return words.filter((w) => /^--[a-z]/.test(w)).map((w) =>
    w.replace(/[=].*$/, "")
  );
}

async function docs(): Promise<{ file: string; text: string }[]> {
  const files = ["README.md", "fixtures/README.md"];
  for await (const e of Deno.readDir(`${ROOT}docs`)) {
    if (e.isFile && e.name.endsWith(".md")) files.push(`docs/${e.name}`);
  }
  files.sort();
  return Promise.all(
    files.map(async (file) => ({
      file,
      text: await Deno.readTextFile(`${ROOT}${file}`),
    })),
  );
}

Deno.test("shownCommands: fenced shell lines, continuations, inline spans", () => {
  const md = [
    "Run `./verity run x --audit`, `deno task verity tools` or `verity run`.",
    "```bash",
    "$ deno run -A scripts/a.ts   # a comment",
    "./verity attest verify a.json \\",
    "  --key k.pem",
    "verity run: target memory is not prepared",
    "```",
    "```toml",
    'verity = "not a command"',
    "```",
  ].join("\n");
  assert.deepEqual(shownCommands("x.md", md).map((c) => c.text), [
    "./verity run x --audit",
    "deno task verity tools",
    "deno run -A scripts/a.ts",
    "./verity attest verify a.json --key k.pem",
  ]);
  assert(freshMachineProblem("deno run -A scripts/a.ts") !== null);
  assert(freshMachineProblem("verity run x") !== null);
  assert(freshMachineProblem("npx deno task test") !== null);
  assert.deepEqual(freshMachineProblem("npx -y deno@2.9.6 task test"), null);
  assert.deepEqual(
    verityInvocation("./verity tools --json -- deno run --allow-all s.ts"),
    { sub: ["tools"], flags: ["--json"] },
  );
  assert.deepEqual(
    verityInvocation("./verity attest verify e.json --key=k.pem"),
    { sub: ["attest", "verify"], flags: ["--key"] },
  );
});

Deno.test("every command in README and docs runs as written on a fresh machine", async () => {
  const problems: string[] = [];
  const invocations = new Map<
    string,
    { flags: Set<string>; where: string[] }
  >();
  let count = 0;
  for (const { file, text } of await docs()) {
    for (const c of shownCommands(file, text)) {
      count++;
      const p = freshMachineProblem(c.text);
      if (p) problems.push(`${c.file}:${c.line}: ${c.text}\n    ${p}`);
      const inv = verityInvocation(c.text);
      if (inv === null) continue;
      const key = inv.sub.join(" ");
      const entry = invocations.get(key) ?? { flags: new Set(), where: [] };
      for (const f of inv.flags) entry.flags.add(f);
      entry.where.push(`${c.file}:${c.line}`);
      invocations.set(key, entry);
    }
  }
  assert(count > 20, `only ${count} commands found: is the extraction broken?`);
  assert(invocations.size > 5, "too few ./verity commands found");
  for (const [sub, { flags, where }] of invocations) {
    const r = await new Deno.Command(`${ROOT}verity`, {
      args: [...sub.split(" ").filter((s) => s !== ""), "--help"],
      env: { VERITY_NO_WARM: "1", NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const help = new TextDecoder().decode(r.stdout) +
      new TextDecoder().decode(r.stderr);
    if (r.code !== 0) {
      problems.push(
        `./verity ${sub} --help exits ${r.code} (shown at ${where[0]}): ${
          help.trim().split("\n")[0]
        }`,
      );
      continue;
    }
    for (const f of flags) {
      if (f === "--help") continue;
      if (!help.includes(f)) {
        problems.push(
          `./verity ${sub}: ${f} is not in its --help (shown at ${
            where.join(", ")
          })`,
        );
      }
    }
  }
  assert.deepEqual(problems, [], problems.join("\n"));
});

/**
 * The client configuration a shown `--from-config <file>` command reads:
 * the last JSON block above it in the same document.
 */
function configBefore(text: string, line: number): string | null {
  const above = text.split("\n").slice(0, line - 1).join("\n");
  const blocks = [...above.matchAll(/```json\n([\s\S]*?)```/g)];
  return blocks.at(-1)?.[1] ?? null;
}

/** A shown command that starts a server through a package runner (npx), itself or by its client config. */
function startsByNpx(cmd: string, config: string | null): boolean {
  return /^\.\/verity \S.* -- (npx|npm exec|pnpm dlx|bunx) /.test(cmd) ||
    (/ --from-config /.test(cmd) && /"command": "npx"/.test(config ?? ""));
}

Deno.test({
  name:
    "every command in README and docs that starts a server by npx runs as written",
  ignore: !await registryReachable(),
  sanitizeResources: false,
  async fn() {
    const shown = (await docs()).flatMap(({ file, text }) =>
      shownCommands(file, text).map((c) => ({
        ...c,
        config: configBefore(text, c.line),
      }))
    ).filter((c) => startsByNpx(c.text, c.config));
    assert(shown.length >= 3, `only ${shown.length} npx commands found`);
    const cwd = await Deno.makeTempDir({ prefix: "verity-docs-npx-" });
    await Deno.chmod(cwd, 0o755); // as root the server runs as uid 65534
    try {
      const problems: string[] = [];
      for (const c of shown) {
        const file = / --from-config (\S+)/.exec(c.text)?.[1];
        if (file !== undefined) {
          await Deno.writeTextFile(`${cwd}/${file}`, c.config!);
        }
        // Through a shell, as a reader pastes it (quotes and all).
        const r = await new Deno.Command("bash", {
          args: ["-c", `"$VERITY"${c.text.replace(/^\.\/verity/, "")}`],
          cwd,
          env: { NO_COLOR: "1", VERITY: `${ROOT}verity` },
          stdout: "piped",
          stderr: "piped",
        }).output();
        if (r.code !== 0) {
          problems.push(
            `${c.file}:${c.line}: ${c.text}\n    exit ${r.code}: ${
              new TextDecoder().decode(r.stderr).trim().split("\n").pop()
            }`,
          );
        }
      }
      assert.deepEqual(problems, [], problems.join("\n"));
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
});

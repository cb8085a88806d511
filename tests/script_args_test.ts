import assert from "node:assert/strict";
import { docComment } from "../scripts/_args.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const SCRIPTS = [...Deno.readDirSync(`${ROOT}scripts`)]
  .filter((e) => e.isFile && /^[a-z].*\.ts$/.test(e.name))
  .map((e) => e.name)
  .filter((n) =>
    /from "\.\/_args\.ts"/.test(Deno.readTextFileSync(`${ROOT}scripts/${n}`))
  )
  .sort();

Deno.test("the doc comment is the first /** */ block without its margins", () => {
  assert.equal(
    docComment(
      "// x\n/**\n * One.\n *\n *   two\n *\n * @module\n */\nconst a = 1;",
    ),
    "One.\n\n  two",
  );
  assert.equal(docComment("const a = 1;"), null);
});

Deno.test("every script that takes options parses them through _args.ts", () => {
  const direct = [...Deno.readDirSync(`${ROOT}scripts`)]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .filter((e) =>
      /import \{[^}]*parseArgs[^}]*\} from "node:util"/.test(
        Deno.readTextFileSync(`${ROOT}scripts/${e.name}`),
      )
    )
    .map((e) => e.name)
    .filter((n) => n !== "_args.ts");
  assert.deepEqual(direct, []);
  assert.ok(SCRIPTS.length >= 15, `only ${SCRIPTS.length} scripts`);
});

async function runScript(name: string, arg: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}scripts/${name}`, arg],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
  };
}

for (const name of SCRIPTS) {
  Deno.test(`scripts/${name}: --help prints its doc, a bad option is one line and exit 2`, async () => {
    const doc = docComment(Deno.readTextFileSync(`${ROOT}scripts/${name}`));
    assert.ok(doc !== null && doc.length > 20, `${name} has no doc comment`);
    const help = await runScript(name, "--help");
    assert.equal(help.code, 0, help.stderr);
    assert.equal(help.stdout.trim(), doc);
    const bad = await runScript(name, "--no-such-option");
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stdout, "");
    assert.match(
      bad.stderr.trimEnd(),
      new RegExp(
        `^${name.replace(".", "\\.")}: [^\\n]*--no-such-option[^\\n]*$`,
      ),
    );
  });
}

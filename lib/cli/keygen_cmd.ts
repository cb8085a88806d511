/**
 * `verity keygen`: a new Ed25519 key pair for `verity attest`.
 *
 * Refuses to write inside a git work tree (a private key there is one
 * `git add` from being published) unless `--inside-work-tree` asks.
 *
 * Requires `--allow-write` and `--allow-run=git`.
 *
 * @module
 */
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { generateKeyPair } from "../evidence/attest.ts";
import { dirname, resolve } from "node:path";
import { gitTopLevel } from "./_io.ts";

async function writeNew(path: string, text: string, mode: number) {
  try {
    await Deno.writeTextFile(path, text, { createNew: true, mode });
  } catch (e) {
    throw new UsageError(
      `verity keygen: ${path}: ${
        e instanceof Deno.errors.AlreadyExists
          ? "already exists (never overwritten)"
          : (e as Error).message
      }`,
    );
  }
}

/** Run `verity keygen`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine(
    "keygen",
    argv,
    { out: { type: "string" }, "inside-work-tree": { type: "boolean" } },
    false,
  );
  const out = p.values.out;
  if (typeof out !== "string" || out === "") {
    throw new UsageError("verity keygen: --out PREFIX is required");
  }
  const tree = await gitTopLevel(dirname(resolve(out)));
  if (tree !== null && p.values["inside-work-tree"] !== true) {
    throw new UsageError(
      `verity keygen: ${out}.pem would be inside the git work tree ${tree}, one \`git add\` from publishing a private key: write it elsewhere (--out ~/.config/verity/release), or pass --inside-work-tree`,
    );
  }
  const k = await generateKeyPair();
  await writeNew(`${out}.pem`, k.privatePem, 0o600);
  await writeNew(`${out}.pub.pem`, k.publicPem, 0o644);
  console.log(
    `private key: ${out}.pem (keep it secret)\npublic key:  ${out}.pub.pem\nkey id:      ${k.keyid}`,
  );
  return 0;
}

/**
 * `verity keygen`: a new Ed25519 key pair for `verity attest`.
 *
 * Requires `--allow-write`.
 *
 * @module
 */
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { generateKeyPair } from "../evidence/attest.ts";

export const HELP = `verity keygen --out PREFIX

Write a new Ed25519 key pair: PREFIX.pem (the private key, PKCS#8 PEM, mode
0600) and PREFIX.pub.pem (the public key, SPKI PEM). Existing files are
never overwritten. Keep the private key off the machines that hold the
evidence; publish the public key.

Exit: 0 written; 2 bad arguments or a file already exists.

Options:
  --out PREFIX   where to write the two files
  -h, --help     show this help`;

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
    { out: { type: "string" } },
    false,
  );
  if (p.values.help) {
    console.log(HELP);
    return 0;
  }
  const out = p.values.out;
  if (typeof out !== "string" || out === "") {
    throw new UsageError("verity keygen: --out PREFIX is required");
  }
  const k = await generateKeyPair();
  await writeNew(`${out}.pem`, k.privatePem, 0o600);
  await writeNew(`${out}.pub.pem`, k.publicPem, 0o644);
  console.log(
    `private key: ${out}.pem (keep it secret)\npublic key:  ${out}.pub.pem\nkey id:      ${k.keyid}`,
  );
  return 0;
}

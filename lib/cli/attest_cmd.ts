/**
 * `verity attest`: sign an in-toto statement about a verified report or
 * manifest; `verity attest verify`: check one offline.
 *
 * Requires `--allow-read` (and `--allow-write` for `--out`).
 *
 * @module
 */
import { basename } from "node:path";
import { parseCommandLine, stringOption } from "./args.ts";
import { InputError, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { parseEvidenceJson } from "../evidence/canonical.ts";
import { readTextDocument } from "../evidence/files.ts";
import {
  type Envelope,
  importPrivateKey,
  importPublicKey,
  PREDICATE_TYPE,
  signStatement,
  type Statement,
  STATEMENT_TYPE,
  verifiedStatement,
} from "../evidence/attest.ts";
import { evidencePredicate } from "../evidence/predicate.ts";
import {
  documentOptions,
  type DocumentVerification,
  verifyDocument,
} from "./_verify_document.ts";

/** The predicate type of a release bundle's attestation (scripts/release.ts). */
export const RELEASE_PREDICATE = "urn:verity:release:v1";

/** Lowercase hex SHA-256 of a file, streamed. Requires `--allow-read`. */
async function fileSha256(path: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  using f = await Deno.open(path);
  for await (const chunk of f.readable) hash.update(chunk);
  return hash.digest("hex");
}

/** Read `--key` and import it; a key that does not import is a usage error naming it. */
async function readKey<T>(
  command: string,
  keyPath: string,
  load: (pem: string) => Promise<T>,
): Promise<T> {
  try {
    return await load((await readTextDocument(keyPath)).text);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new UsageError(
      `${command}: --key ${keyPath}: ${(e as Error).message}`,
    );
  }
}

async function attest(p: ReturnType<typeof parseCommandLine>): Promise<number> {
  if (p.positionals.length !== 1) {
    throw new UsageError("verity attest: expected one document to attest");
  }
  const keyPath = stringOption(p.values.key);
  if (keyPath === null) {
    throw new UsageError("verity attest: --key is required");
  }
  const signer = await readKey("verity attest", keyPath, importPrivateKey);
  const path = p.positionals[0]!;
  // A report keeping its seed by reference rebuilds it from --definition.
  const v = await verifyDocument(
    path,
    documentOptions(p.values),
    "verity attest",
  );
  if (!v.ok) {
    for (const l of v.lines) console.error(l);
    console.error(`verity attest: ${path} does not verify: not signed`);
    return 1;
  }
  let definition:
    | { digest: string; source: Record<string, unknown> | null }
    | null = null;
  const defPath = stringOption(p.values.definition);
  if (defPath !== null) {
    const { loadDefinition } = await import("../definition/mod.ts");
    const def = await loadDefinition(defPath);
    definition = { digest: def.digest, source: def.source };
  }
  let predicate: Record<string, unknown>;
  try {
    predicate = evidencePredicate(v.kind, v.value, {
      attester: VERSION,
      definition,
      ledger: v.block && v.head ? { block: v.block.index, head: v.head } : null,
    });
  } catch (e) {
    throw new UsageError(
      `verity attest: --definition ${defPath}: ${(e as Error).message}`,
    );
  }
  const statement: Statement = {
    _type: STATEMENT_TYPE,
    subject: [{
      name: basename(path).replace(/\.gz$/, ""),
      digest: { sha256: v.digest.slice("sha256:".length) },
    }],
    predicateType: PREDICATE_TYPE,
    predicate,
  };
  const envelope = await signStatement(statement, signer);
  const text = JSON.stringify(envelope, null, 2) + "\n";
  const out = stringOption(p.values.out);
  if (out !== null) {
    await writeTextFileAtomic(out, text);
    console.error(
      `verity attest: signed ${statement.subject[0]!.name} (sha256:${
        statement.subject[0]!.digest.sha256
      }) with key ${signer.keyid} -> ${out}`,
    );
  } else console.log(text.trimEnd());
  return 0;
}

/** The attestation checks, each as one line; `ok` false on any failure. */
async function verifyAttestation(
  p: ReturnType<typeof parseCommandLine>,
): Promise<number> {
  if (p.positionals.length !== 2) {
    throw new UsageError("verity attest verify: expected one envelope");
  }
  const keyPath = stringOption(p.values.key);
  if (keyPath === null) {
    throw new UsageError("verity attest verify: --key PUBLIC.pem is required");
  }
  const key = await readKey("verity attest verify", keyPath, importPublicKey);
  const envPath = p.positionals[1]!;
  let envelope: unknown;
  try {
    envelope = parseEvidenceJson((await readTextDocument(envPath)).text);
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new UsageError(`${envPath}: not valid JSON: ${(e as Error).message}`);
  }
  const fail = (msg: string) => {
    console.log(`REFUSED ${msg}`);
    console.log("attestation NOT verified");
    return 1;
  };
  const v0 = await verifiedStatement(envelope, key, [
    PREDICATE_TYPE,
    RELEASE_PREDICATE,
  ]);
  if (!v0.ok) return fail(v0.reason);
  const statement = v0.statement;
  const subject = statement.subject[0]!;
  console.log(
    `signature: good, key ${key.keyid}; subject ${subject.name} sha256:${subject.digest?.sha256}`,
  );
  const reportPath = stringOption(p.values.report);
  if (statement.predicateType === RELEASE_PREDICATE) {
    // A release bundle: the subject is the tarball beside the envelope.
    const file = reportPath ?? envPath.replace(/\.intoto\.json$/, "");
    let sum: string;
    try {
      sum = await fileSha256(file);
    } catch (e) {
      throw new UsageError(
        `verity attest verify: ${file}: ${
          (e as Error).message
        } (the release bundle the envelope is about; --report FILE names it)`,
      );
    }
    if (subject.name !== basename(file) || subject.digest?.sha256 !== sum) {
      return fail(
        `subject: the statement is about ${subject.name} sha256:${subject.digest?.sha256}, ${file} is ${
          basename(file)
        } sha256:${sum}`,
      );
    }
    console.log(
      `attestation verified: signature, subject (the release bundle ${subject.name})`,
    );
    return 0;
  }
  const ledger = stringOption(p.values.ledger);
  if (reportPath === null) {
    if (
      ledger !== null || p.values["expected-head"] !== undefined ||
      p.values["expected-head-file"] !== undefined ||
      p.values.definition !== undefined
    ) {
      throw new UsageError(
        "verity attest verify: --ledger, --expected-head and --definition need --report",
      );
    }
    console.log(
      "attestation verified (signature only: give --report to check the document)",
    );
    return 0;
  }
  const v: DocumentVerification = await verifyDocument(
    reportPath,
    documentOptions(p.values),
    "verity attest verify",
  );
  for (const l of v.lines.slice(0, -1)) console.log(l);
  if (`sha256:${subject.digest?.sha256}` !== v.digest) {
    return fail(
      `subject: the statement is about sha256:${subject.digest?.sha256}, ${reportPath} is ${v.digest}`,
    );
  }
  if (!v.ok) return fail(`${reportPath}: does not verify (above)`);
  const pred = statement.predicate as Record<string, unknown>;
  const again = evidencePredicate(v.kind, v.value, {
    attester: String(pred.attester),
    definition: null,
    ledger: null,
  });
  for (const k of ["kind", "document", "summary"] as const) {
    if (JSON.stringify(pred[k]) !== JSON.stringify(again[k])) {
      return fail(
        `predicate.${k}: the statement says ${
          JSON.stringify(pred[k])
        }, the document gives ${JSON.stringify(again[k])}`,
      );
    }
  }
  if (v.head !== null) {
    const pl = pred.ledger as { block?: unknown; head?: unknown } | null;
    if (!pl || pl.head !== v.head || pl.block !== v.block?.index) {
      return fail(
        `predicate.ledger: the statement says ${
          JSON.stringify(pl)
        }, the ledger gives block ${v.block?.index} under head ${v.head}`,
      );
    }
  }
  console.log(
    `attestation verified: signature, subject, re-derivation${
      v.head ? ", ledger chain, block and head" : ""
    }`,
  );
  return 0;
}

/** Run `verity attest`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("attest", argv, {
    key: { type: "string" },
    ledger: { type: "string" },
    "expected-head": { type: "string" },
    "expected-head-file": { type: "string" },
    definition: { type: "string" },
    report: { type: "string" },
    out: { type: "string" },
  });
  if (p.positionals[0] === "verify") {
    if (p.values.out !== undefined) {
      throw new UsageError(
        "verity attest verify: --out applies to verity attest",
      );
    }
    return await verifyAttestation(p);
  }
  if (p.values.report !== undefined) {
    throw new UsageError(
      "verity attest: --report applies to verity attest verify",
    );
  }
  return await attest(p);
}

export type { Envelope };

/**
 * `verity guard`: a stdio MCP proxy a client starts in place of the server,
 * holding the live server to its audit (`lib/guard/`).
 *
 * Requires `--allow-all` (starts the server sandboxed, reads the evidence,
 * writes the ledger).
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import {
  parseCommandLine,
  parseEnvPairs,
  requireServerCommand,
  stringOption,
} from "./args.ts";
import { EvidenceError, UsageError } from "../errors.ts";
import { parseEvidenceJson } from "../evidence/canonical.ts";
import {
  readEvidenceText,
  readJsonDocument,
  readTextDocument,
} from "../evidence/files.ts";
import { importPublicKey, verifiedStatement } from "../evidence/attest.ts";
import {
  type Audited,
  auditedManifest,
  auditedReport,
} from "../guard/audited.ts";
import {
  DEFAULT_POLICY,
  type GuardPolicy,
  parsePolicy,
} from "../guard/policy.ts";
import { runGuard } from "../guard/proxy.ts";
import { launchCommand } from "../launcher/command.ts";
import type { Allowance } from "../sandbox/types.ts";
import { isDirectory } from "../common/exists.ts";

/** The audit evidence of `--manifest`, or of `--attestation --key [--report]` once its signature and subject check out. */
async function readAudited(
  manifest: string | null,
  attestation: string | null,
  keyPath: string | null,
  reportPath: string | null,
): Promise<Audited> {
  if ((manifest === null) === (attestation === null)) {
    throw new UsageError(
      "verity guard: give --manifest M, or --attestation E --key K",
    );
  }
  if (manifest !== null) {
    if (keyPath !== null || reportPath !== null) {
      throw new UsageError(
        "verity guard: --key and --report go with --attestation",
      );
    }
    const d = await readJsonDocument(manifest, { digest: true });
    return auditedManifest(d.value, manifest, d.sha256!);
  }
  if (keyPath === null) {
    throw new UsageError("verity guard: --attestation needs --key PUBLIC.pem");
  }
  let key;
  try {
    key = await importPublicKey((await readTextDocument(keyPath)).text);
  } catch (e) {
    if (e instanceof EvidenceError) throw e;
    throw new UsageError(
      `verity guard: --key ${keyPath}: ${(e as Error).message}`,
    );
  }
  const env = attestation!;
  let envelope: unknown;
  try {
    envelope = parseEvidenceJson((await readTextDocument(env)).text);
  } catch (e) {
    if (e instanceof EvidenceError) throw e;
    throw new EvidenceError(`${env}: not valid JSON: ${(e as Error).message}`);
  }
  const v = await verifiedStatement(envelope, key);
  if (!v.ok) throw new EvidenceError(`${env}: refused: ${v.reason}`);
  const subject = v.statement.subject[0];
  const kind = v.statement.predicate.kind;
  if (kind !== "report" && kind !== "manifest") {
    throw new EvidenceError(
      `${env}: attests a ${
        String(kind)
      }; the guard needs a report or a manifest`,
    );
  }
  let doc = reportPath;
  if (doc === null) {
    // The subject is named by its file's name, beside the envelope (maybe gzipped).
    const near = join(dirname(env), subject.name.replace(/^.*\//, ""));
    doc = await Deno.stat(near).then(() => near, () => `${near}.gz`);
  }
  const read = await readEvidenceText(doc);
  if (read.digest !== `sha256:${subject.digest?.sha256}`) {
    throw new EvidenceError(
      `${doc}: is ${read.digest}, not the attested subject sha256:${subject.digest?.sha256} (give the attested file with --report)`,
    );
  }
  let value: unknown;
  try {
    value = parseEvidenceJson(read.text);
  } catch (e) {
    throw new EvidenceError(`${doc}: not valid JSON: ${(e as Error).message}`);
  }
  return kind === "report"
    ? auditedReport(value, doc, read.digest)
    : auditedManifest(value, doc, read.digest);
}

/**
 * A definition's sandbox allowances: `allow.sys`, `allow.run` and its read
 * paths (`{target}` resolved; `{state}` ones are the server's anyway).
 */
async function allowances(
  path: string | null,
): Promise<{ allow?: Allowance; readPaths?: string[] }> {
  if (path === null) return {};
  const { loadDefinition } = await import("../definition/load.ts");
  const def = await loadDefinition(path);
  const readPaths: string[] = [];
  def.read.forEach((r, i) => {
    if (r.startsWith("{state}")) return;
    const p = r.replaceAll("{target}", def.dir);
    if (/\{[A-Za-z_]\w*\}/.test(p)) {
      throw new UsageError(
        `verity guard: ${def.file}: ${
          def.readKeys?.[i] ?? "read"
        }: ${r}: the guard resolves only {target} and {state} in read paths`,
      );
    }
    readPaths.push(resolve(def.dir, p));
  });
  return { allow: def.allow, readPaths };
}

/** Run `verity guard`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("guard", argv, {
    manifest: { type: "string" },
    attestation: { type: "string" },
    key: { type: "string" },
    report: { type: "string" },
    policy: { type: "string" },
    ledger: { type: "string" },
    state: { type: "string" },
    definition: { type: "string" },
    env: { type: "string", multiple: true },
    "pass-env": { type: "string", multiple: true },
    "no-sandbox": { type: "boolean" },
  }, false);
  const command = requireServerCommand("guard", p);
  const ledger = stringOption(p.values.ledger);
  if (ledger === null || ledger === "") {
    throw new UsageError(
      "verity guard: --ledger FILE is required (every call is recorded there)",
    );
  }
  const audited = await readAudited(
    stringOption(p.values.manifest),
    stringOption(p.values.attestation),
    stringOption(p.values.key),
    stringOption(p.values.report),
  );
  let policy: GuardPolicy = DEFAULT_POLICY;
  const policyPath = stringOption(p.values.policy);
  if (policyPath !== null) {
    policy = parsePolicy((await readTextDocument(policyPath)).text, policyPath);
  }
  const env = parseEnvPairs("guard", p.values.env);
  for (const name of (p.values["pass-env"] ?? []) as string[]) {
    const v = Deno.env.get(name);
    if (v !== undefined) env[name] = v;
  }
  const state = stringOption(p.values.state);
  if (state !== null && !(await isDirectory(state))) {
    throw new UsageError(`verity guard: --state ${state}: not a directory`);
  }
  const launched = await launchCommand(command, env, {
    noSandbox: p.values["no-sandbox"] === true,
    commandName: "verity guard",
    ...(state !== null ? { stateDir: resolve(state) } : {}),
    ...await allowances(stringOption(p.values.definition)),
  });
  let signalled: Deno.Signal | null = null;
  const stop = Promise.withResolvers<void>();
  const on = (s: Deno.Signal) => () => {
    signalled = s;
    stop.resolve();
  };
  const listeners = (["SIGINT", "SIGTERM"] as const).map((s) =>
    [s, on(s)] as const
  );
  for (const [s, f] of listeners) Deno.addSignalListener(s, f);
  try {
    const out = await runGuard({
      audited,
      policy,
      spec: launched.spec,
      ...(launched.launch ? { launch: launched.launch } : {}),
      ledger,
      command,
      stop: stop.promise,
    });
    console.error(
      `verity guard: ledger ${ledger}: ${out.blocks} block(s), head ${out.head}`,
    );
    if (signalled !== null) return signalled === "SIGINT" ? 130 : 143;
    return out.code;
  } finally {
    for (const [s, f] of listeners) Deno.removeSignalListener(s, f);
    await launched.dispose();
  }
}

/**
 * A merged census against the unsharded one (test-only): the same
 * census.json apart from `run` and each server's `timing`, the same files,
 * a byte-identical census.html, artifacts equal once their timing fields
 * are masked, and ledgers that chain the same artifacts in the same order.
 * Used by every suite that shards the local fixture list.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { type CensusDocument, withoutTiming } from "../lib/census/result.ts";

/** The local fixture list every sharding suite runs. */
export const LOCAL_LIST =
  new URL("./data/census/local.toml", import.meta.url).pathname;

/** Every file under `dir`, relative, sorted. */
export async function files(dir: string, base = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(join(dir, base))) {
    const rel = base ? `${base}/${e.name}` : e.name;
    if (e.isDirectory) out.push(...await files(dir, rel));
    else out.push(rel);
  }
  return out.sort();
}

/** A census directory's census.json. */
export async function readDoc(dir: string): Promise<CensusDocument> {
  return JSON.parse(await Deno.readTextFile(join(dir, "census.json")));
}

/** An artifact with its timing fields (manifest `captured_at`, reality `ms`) masked. */
function maskTiming(text: string): string {
  return JSON.stringify(
    JSON.parse(text, (k, v) => k === "captured_at" || k === "ms" ? 0 : v),
  );
}

/** Each ledger block as `type file`, in chain order. */
export async function ledgerBlocks(dir: string): Promise<string[]> {
  return (JSON.parse(await Deno.readTextFile(join(dir, "ledger.json"))) as {
    blocks: { type: string; record: { file: string } }[];
  }).blocks.map((b) => `${b.type} ${b.record.file}`);
}

/** Assert that the census in `merged` is the one in `whole` apart from timing. */
export async function assertSameCensus(
  merged: string,
  whole: string,
): Promise<void> {
  assert.equal(
    JSON.stringify(withoutTiming(await readDoc(merged)), null, 2),
    JSON.stringify(withoutTiming(await readDoc(whole)), null, 2),
  );
  assert.deepEqual(await files(merged), await files(whole));
  assert.equal(
    await Deno.readTextFile(join(merged, "census.html")),
    await Deno.readTextFile(join(whole, "census.html")),
  );
  for (const f of await files(whole)) {
    if (!f.startsWith("servers/")) continue;
    assert.equal(
      maskTiming(await Deno.readTextFile(join(merged, f))),
      maskTiming(await Deno.readTextFile(join(whole, f))),
      f,
    );
  }
  assert.deepEqual(await ledgerBlocks(merged), await ledgerBlocks(whole));
}

/** census.json's validator, from docs/schema/census.schema.json. */
export async function schemaValidator(): Promise<
  (doc: unknown) => string | null
> {
  const schema = JSON.parse(
    await Deno.readTextFile(
      new URL("../docs/schema/census.schema.json", import.meta.url),
    ),
  );
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv2020 as any)({ allErrors: true, strict: true });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  const validate = ajv.compile(schema);
  return (doc) =>
    validate(doc) ? null : JSON.stringify(validate.errors.slice(0, 3));
}

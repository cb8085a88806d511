/**
 * A census directory on disk, written the same way by a run and by a merge:
 *
 * ```
 * <out>/census.json              the document (schema verity.census/1)
 * <out>/census.html              the summary page (self-contained)
 * <out>/ledger.json              a hash chain over every per-server artifact, in census order
 * <out>/servers/<slug>/manifest.json   recipe-3 manifest
 * <out>/servers/<slug>/reality.json    reality report
 * <out>/servers/<slug>/report.json     the battery's report (--behavior)
 * <out>/servers/<slug>/target.toml     the target it learned by use (--behavior)
 * ```
 *
 * Requires `--allow-read` and `--allow-write`.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { CensusError, InputError } from "../errors.ts";
import { sha256Hex } from "../evidence/canonical.ts";
import { writeTextFileAtomic } from "../evidence/atomic_write.ts";
import { appendBlocks, type Entry } from "../evidence/ledger.ts";
import type { CensusDocument } from "./result.ts";
import { renderCensusHtml } from "./html.ts";

/** A census artifact's ledger type. */
export type ArtifactType = "manifest" | "reality" | "report" | "target";

/** The artifact files of a document's servers, in census order, with their ledger types. */
export function artifactsOf(
  doc: Pick<CensusDocument, "servers">,
): { file: string; type: ArtifactType }[] {
  const out: { file: string; type: ArtifactType }[] = [];
  for (const s of doc.servers) {
    if (s.manifest) out.push({ file: s.manifest.file, type: "manifest" });
    if (s.reality) out.push({ file: s.reality.file, type: "reality" });
    if (s.behavior?.report) {
      out.push({ file: s.behavior.report, type: "report" });
    }
    if (s.behavior?.target) {
      out.push({ file: s.behavior.target, type: "target" });
    }
  }
  return out;
}

/**
 * Refuse an output directory that is not empty (a census never mixes with
 * an older one). Creates it when absent.
 */
export async function claimOutDir(out: string, command: string): Promise<void> {
  try {
    for await (const _ of Deno.readDir(out)) {
      throw new CensusError(
        `verity ${command}: --out ${out} is not empty; give a new or empty directory`,
      );
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new CensusError(
        `verity ${command}: --out ${out}: ${(e as Error).message}`,
      );
    }
  }
  await Deno.mkdir(out, { recursive: true });
}

/** Write one artifact under the census directory. */
export async function writeArtifact(
  out: string,
  file: string,
  text: string,
): Promise<void> {
  const path = join(out, file);
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeTextFileAtomic(path, text);
}

/**
 * Chain every artifact (already written under `out`) into `out/ledger.json`
 * in census order, then write census.json (with the ledger's head) and
 * census.html. Returns the document as written.
 */
export async function finishCensus(
  out: string,
  doc: CensusDocument,
): Promise<CensusDocument> {
  const entries: Entry[] = [];
  for (const a of artifactsOf(doc)) {
    const text = await Deno.readTextFile(join(out, a.file));
    entries.push({
      type: a.type,
      record: { file: a.file, digest: `sha256:${sha256Hex(text)}` },
    });
  }
  const ledger = join(out, "ledger.json");
  await Deno.remove(ledger).catch(() => {});
  const { head } = await appendBlocks(ledger, entries);
  await Deno.remove(`${ledger}.lock`).catch(() => {});
  const written: CensusDocument = {
    ...doc,
    run: { ...doc.run, ledgerHead: head },
  };
  written.run.shards = written.run.shards.map((s) =>
    s.ledgerHead === "" ? { ...s, ledgerHead: head } : s
  );
  await writeTextFileAtomic(
    join(out, "census.json"),
    JSON.stringify(written, null, 2) + "\n",
  );
  await writeTextFileAtomic(
    join(out, "census.html"),
    renderCensusHtml(written),
  );
  return written;
}

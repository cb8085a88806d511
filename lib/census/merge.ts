/**
 * `verity census merge`: combine the directories of every shard of one
 * census into the directory the unsharded census would have written (equal
 * apart from timing fields), carrying each shard's ledger head in `run`.
 *
 * Refuses (one line, exit 2): shards of different lists, settings or verity
 * versions; a missing or repeated shard; a server in the wrong shard or in
 * two; a shard whose ledger does not verify against the head its
 * census.json records, or whose artifacts do not match its ledger.
 *
 * Requires `--allow-read` and `--allow-write`.
 *
 * @module
 */
import { join } from "node:path";
import { CensusError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { sha256Hex } from "../evidence/canonical.ts";
import { readLedgerFile, verifyLedgerFile } from "../evidence/ledger.ts";
import { shardOf } from "./shard.ts";
import {
  buildDocument,
  CENSUS_SCHEMA,
  type CensusDocument,
  type CensusServer,
  type CensusShardRun,
} from "./result.ts";
import {
  artifactsOf,
  claimOutDir,
  finishCensus,
  writeArtifact,
} from "./output.ts";

function refuse(msg: string): never {
  throw new CensusError(`verity census merge: ${msg}`);
}

async function readShard(dir: string): Promise<CensusDocument> {
  const file = join(dir, "census.json");
  let doc: unknown;
  try {
    doc = JSON.parse(await Deno.readTextFile(file));
  } catch (e) {
    refuse(
      `${file}: ${
        e instanceof Deno.errors.NotFound
          ? "missing (not a census directory)"
          : `cannot read: ${(e as Error).message.split("\n")[0]}`
      }`,
    );
  }
  const d = doc as Partial<CensusDocument> | null;
  if (d === null || typeof d !== "object" || d.schema !== CENSUS_SCHEMA) {
    refuse(`${file}: schema is not ${CENSUS_SCHEMA}`);
  }
  if (
    typeof d.shard !== "string" || !Array.isArray(d.servers) ||
    typeof d.list !== "object" || d.list === null || !d.run ||
    !Array.isArray(d.run.shards)
  ) {
    refuse(`${file}: not a complete census document`);
  }
  return d as CensusDocument;
}

/** Check a shard's ledger against its head, and its artifacts against the ledger. */
async function checkShardLedger(
  dir: string,
  doc: CensusDocument,
): Promise<void> {
  const path = join(dir, "ledger.json");
  let v;
  try {
    v = await verifyLedgerFile(path, doc.run.ledgerHead);
  } catch (e) {
    refuse(`${path}: ${(e as Error).message.split("\n")[0]}`);
  }
  if (!v.ok) {
    refuse(
      `${path}: does not verify against the head ${doc.run.ledgerHead} its census.json records (${
        v.problems[0]?.message ?? "unknown problem"
      })`,
    );
  }
  const blocks = ((await readLedgerFile(path)) as {
    blocks: { type: string; record: { file?: unknown; digest?: unknown } }[];
  }).blocks;
  const wanted = artifactsOf(doc);
  if (blocks.length !== wanted.length) {
    refuse(
      `${path}: records ${blocks.length} artifacts, census.json names ${wanted.length}`,
    );
  }
  for (let i = 0; i < wanted.length; i++) {
    const a = wanted[i]!;
    const b = blocks[i]!;
    if (b.type !== a.type || b.record.file !== a.file) {
      refuse(
        `${path}: block ${i} records ${
          String(b.record.file)
        }, expected ${a.file}`,
      );
    }
    let text: string;
    try {
      text = await Deno.readTextFile(join(dir, a.file));
    } catch {
      refuse(`${join(dir, a.file)}: missing (the shard's ledger records it)`);
    }
    if (b.record.digest !== `sha256:${sha256Hex(text)}`) {
      refuse(
        `${join(dir, a.file)}: does not match the digest its ledger records`,
      );
    }
  }
}

/**
 * Merge shard directories into `out`. Returns the merged document.
 *
 * @example
 * ```ts ignore
 * await mergeCensus(["out/shard-1", "out/shard-2"], "out/all");
 * ```
 */
export async function mergeCensus(
  dirs: readonly string[],
  out: string,
): Promise<CensusDocument> {
  if (dirs.length === 0) refuse("give the shard directories to merge");
  const docs: { dir: string; doc: CensusDocument }[] = [];
  for (const dir of dirs) docs.push({ dir, doc: await readShard(dir) });
  const first = docs[0]!;
  for (const { dir, doc } of docs) {
    if (doc.verity !== VERSION) {
      refuse(
        `${dir} was written by verity ${doc.verity}, this is verity ${VERSION}; merge shards of one verity version`,
      );
    }
    if (
      doc.list.name !== first.doc.list.name ||
      doc.list.digest !== first.doc.list.digest
    ) {
      refuse(
        `${dir} is a census of list ${doc.list.name} (${doc.list.digest}), ${first.dir} of ${first.doc.list.name} (${first.doc.list.digest}); merge shards of one list`,
      );
    }
    if (JSON.stringify(doc.settings) !== JSON.stringify(first.doc.settings)) {
      refuse(
        `${dir} ran with settings ${
          JSON.stringify(doc.settings)
        }, ${first.dir} with ${JSON.stringify(first.doc.settings)}`,
      );
    }
  }
  const n = Number(first.doc.shard.split("/")[1]);
  const seen = new Map<number, string>();
  for (const { dir, doc } of docs) {
    const [k, m] = doc.shard.split("/").map(Number) as [number, number];
    if (m !== n) {
      refuse(
        `${dir} is shard ${doc.shard}, ${first.dir} is shard ${first.doc.shard}: shards of one split`,
      );
    }
    const prev = seen.get(k);
    if (prev !== undefined) {
      refuse(`${dir} and ${prev} are both shard ${doc.shard}`);
    }
    seen.set(k, dir);
  }
  for (let k = 1; k <= n; k++) {
    if (!seen.has(k)) refuse(`shard ${k}/${n} is missing`);
  }
  const servers: CensusServer[] = [];
  const owner = new Map<string, string>();
  for (const { dir, doc } of docs) {
    const k = Number(doc.shard.split("/")[0]);
    for (const s of doc.servers) {
      if (shardOf(s.id, n) !== k) {
        refuse(
          `${dir}: ${s.id} belongs to shard ${
            shardOf(s.id, n)
          }/${n}, not ${doc.shard}`,
        );
      }
      const o = owner.get(s.id);
      if (o !== undefined) refuse(`${s.id} is in both ${o} and ${dir}`);
      owner.set(s.id, dir);
      servers.push(s);
    }
    await checkShardLedger(dir, doc);
  }
  if (servers.length !== first.doc.list.servers) {
    refuse(
      `the shards hold ${servers.length} of the list's ${first.doc.list.servers} servers (a shard did not finish?)`,
    );
  }
  await claimOutDir(out, "census merge");
  for (const { dir, doc } of docs) {
    for (const a of artifactsOf(doc)) {
      await writeArtifact(
        out,
        a.file,
        await Deno.readTextFile(join(dir, a.file)),
      );
    }
  }
  const shards: CensusShardRun[] = docs
    .flatMap(({ doc }) => doc.run.shards)
    .sort((a, b) =>
      Number(a.shard.split("/")[0]) - Number(b.shard.split("/")[0])
    );
  const doc = buildDocument({
    verity: VERSION,
    list: first.doc.list,
    settings: first.doc.settings,
    shard: "1/1",
    servers,
    run: { ledgerHead: "", shards },
  });
  return await finishCensus(out, doc);
}

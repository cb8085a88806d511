/**
 * `verity census`: audit many published servers from one list, in shards;
 * `verity census prepare` fetches them (the only networked step);
 * `verity census merge` combines shard directories.
 *
 * Requires `--allow-all` (npm and deno for prepare, sandboxed servers).
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { parseCommandLine, parseCount, parseSeed } from "./args.ts";
import { UsageError } from "../errors.ts";
import { DEFAULT_SEED } from "../reality/prng.ts";
import { type CensusList, parseCensusList } from "../census/list.ts";
import { inShard, parseShardSpec, type ShardSpec } from "../census/shard.ts";
import { censusCacheRoot, prepareCensus } from "../census/prepare.ts";
import { runCensus } from "../census/run.ts";
import { mergeCensus } from "../census/merge.ts";
import type { CensusDocument } from "../census/result.ts";
import { terminalText } from "../common/show_controls.ts";

async function loadList(file: string): Promise<CensusList> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch (e) {
    throw new UsageError(
      `verity census: ${file}: ${
        e instanceof Deno.errors.NotFound
          ? "no such list file"
          : (e as Error).message
      }`,
    );
  }
  return parseCensusList(bytes, file, dirname(resolve(file)));
}

function oneList(p: { positionals: string[] }, usage: string): string {
  if (p.positionals.length !== 1) {
    throw new UsageError(
      `verity census: expected one list file (${usage}), got ${
        p.positionals.length === 0 ? "none" : p.positionals.join(" ")
      }`,
    );
  }
  return p.positionals[0]!;
}

function say(line: string): void {
  console.error(terminalText(`verity census: ${line}`));
}

function printSummary(doc: CensusDocument, out: string): void {
  const s = doc.summary;
  console.log(
    `census ${doc.list.name} shard ${doc.shard}: ${s.servers} servers: ${s.outcomes.audited} audited, ${s.outcomes.partial} listed only, ${s.outcomes.failed} failed`,
  );
  console.log(
    `  hints: ${s.serversDeclaring} servers declare some; ${s.hints.toolsDeclaring}/${s.hints.tools} tools; ${s.serversMalformed} servers with malformed hints`,
  );
  const b = s.behavior;
  if (b !== undefined) {
    const c = b.claims;
    const failed = b.failed.timed_out + b.failed.failed +
      b.failed.internal_error;
    console.log(
      `  behavior: ${b.servers} batteries (${failed} did not finish); ${c.falsifiable} claims: ${c.held} held, ${c.violated} violated, ${c.untested} untested; violation rate ${
        c.violationRate === null
          ? "n/a (nothing tested)"
          : c.violationRate.toFixed(3)
      }; ${b.serversViolating} servers with a VIOLATION`,
    );
  }
  console.log(`  written: ${out}/census.json, census.html, ledger.json`);
  console.log(`  ledger head: ${doc.run.ledgerHead}`);
}

async function prepareMain(argv: string[]): Promise<number> {
  const p = parseCommandLine("census", argv, {
    shard: { type: "string" },
    jobs: { type: "string" },
    cache: { type: "string" },
  });
  const list = await loadList(oneList(p, "verity census prepare <list.toml>"));
  const shard: ShardSpec = typeof p.values.shard === "string"
    ? parseShardSpec(p.values.shard, "--shard")
    : { k: 1, n: 1 };
  const cacheRoot = censusCacheRoot(
    list,
    typeof p.values.cache === "string" ? p.values.cache : null,
  );
  const r = await prepareCensus(list, inShard(list.servers, shard), {
    cacheRoot,
    jobs: parseCount("census", "jobs", p.values.jobs, 1),
    say,
  });
  console.log(
    `prepared ${r.prepared} of ${
      r.prepared + r.failed.length
    } published servers into ${cacheRoot}${
      r.failed.length
        ? ` (${r.failed.length} not prepared: the census reports them as not_prepared)`
        : ""
    }`,
  );
  return 0;
}

async function mergeMain(argv: string[]): Promise<number> {
  const p = parseCommandLine("census", argv, { out: { type: "string" } });
  if (typeof p.values.out !== "string" || p.values.out === "") {
    throw new UsageError("verity census merge: --out DIR is required");
  }
  const doc = await mergeCensus(p.positionals, p.values.out);
  printSummary(doc, p.values.out);
  return 0;
}

/** Run `verity census`. */
export async function main(argv: string[]): Promise<number> {
  if (argv[0] === "prepare") return await prepareMain(argv.slice(1));
  if (argv[0] === "merge") return await mergeMain(argv.slice(1));
  const p = parseCommandLine("census", argv, {
    out: { type: "string" },
    shard: { type: "string" },
    jobs: { type: "string" },
    cache: { type: "string" },
    seed: { type: "string" },
    prepare: { type: "boolean" },
    "read-only": { type: "boolean" },
    behavior: { type: "boolean" },
  });
  const list = await loadList(oneList(p, "verity census <list.toml>"));
  const shard: ShardSpec = typeof p.values.shard === "string"
    ? parseShardSpec(p.values.shard, "--shard")
    : { k: 1, n: 1 };
  const jobs = parseCount("census", "jobs", p.values.jobs, 1);
  const seed = parseSeed("census", p.values.seed, DEFAULT_SEED);
  const cacheRoot = censusCacheRoot(
    list,
    typeof p.values.cache === "string" ? p.values.cache : null,
  );
  const out = typeof p.values.out === "string" && p.values.out !== ""
    ? p.values.out
    : `runs/census-${list.name}${
      shard.n === 1 ? "" : `-shard-${shard.k}-of-${shard.n}`
    }`;
  if (p.values.prepare === true) {
    await prepareCensus(list, inShard(list.servers, shard), {
      cacheRoot,
      jobs,
      say,
    });
  }
  const doc = await runCensus(list, {
    cacheRoot,
    out,
    shard,
    jobs,
    settings: {
      recipe: "3",
      seed,
      includeDestructive: p.values["read-only"] !== true,
      ...(p.values.behavior === true ? { behavior: true as const } : {}),
    },
    say,
  });
  printSummary(doc, out);
  return 0;
}

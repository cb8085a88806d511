/**
 * Running a census (or one shard of it): audit each server of the shard,
 * `jobs` at a time, write its artifacts as it finishes, then chain them
 * into the ledger and write census.json and census.html in census order,
 * so the output does not depend on which server finished first.
 *
 * Requires `--allow-all`.
 *
 * @module
 */
import { VERSION } from "../version.ts";
import type { CensusList } from "./list.ts";
import { inShard, type ShardSpec, shardText } from "./shard.ts";
import { type AuditedServer, auditServer, blankServer } from "./audit.ts";
import { pool } from "../common/pool.ts";
import {
  buildDocument,
  type CensusDocument,
  type CensusSettings,
} from "./result.ts";
import { claimOutDir, finishCensus, writeArtifact } from "./output.ts";

/** Options of {@linkcode runCensus}. */
export interface RunCensusOptions {
  cacheRoot: string;
  out: string;
  shard: ShardSpec;
  /** Servers audited at once. @default {1} */
  jobs?: number;
  settings: CensusSettings;
  /** A line per finished server. */
  say: (line: string) => void;
}

/**
 * Run the census of the servers in `options.shard` and write its directory.
 * Throws `InputError` only for bad input (a non-empty `--out`).
 */
export async function runCensus(
  list: CensusList,
  options: RunCensusOptions,
): Promise<CensusDocument> {
  await claimOutDir(options.out, "census");
  const startedAt = new Date();
  const t0 = performance.now();
  const servers = inShard(list.servers, options.shard);
  const jobs = options.jobs ?? 1;
  let done = 0;
  const results = await pool(servers, jobs, async (entry) => {
    const r = await auditServer(list, entry, {
      cacheRoot: options.cacheRoot,
      settings: options.settings,
    }).catch((e): AuditedServer => {
      // A fault of verity's own is this server's result, not the census's end.
      const server = blankServer(entry);
      server.failure = {
        stage: "verity",
        kind: "internal_error",
        message: String(e instanceof Error ? e.message : e).slice(0, 2000),
      };
      return { server, artifacts: [] };
    });
    for (const a of r.artifacts) {
      await writeArtifact(options.out, a.file, a.text);
    }
    done++;
    const s = r.server;
    options.say(
      `[${done}/${servers.length}] ${s.id}: ${s.outcome}${
        s.failure
          ? ` (${s.failure.kind}: ${s.failure.message.slice(0, 160)})`
          : ""
      }${
        s.outcome === "failed"
          ? ""
          : `, ${s.hints.tools} tools, ${s.hints.toolsDeclaring} declaring hints${
            s.reality
              ? `, reality ${s.reality.score ?? "-"}${
                s.reality.grade ? " " + s.reality.grade : ""
              } (${s.reality.checked}/${s.reality.total})`
              : ""
          }${
            s.behavior === undefined
              ? ""
              : s.behavior.claims
              ? `, battery ${s.behavior.claims.held} held, ${s.behavior.claims.violated} violated, ${s.behavior.claims.untested} untested`
              : `, battery ${s.behavior.failure?.kind ?? "not run"}: ${
                s.behavior.failure?.message.slice(0, 160) ?? ""
              }`
          }`
      } in ${s.timing.seconds} s`,
    );
    return r.server;
  });
  const shard = shardText(options.shard);
  const doc = buildDocument({
    verity: VERSION,
    list: {
      name: list.name,
      digest: list.digest,
      servers: list.servers.length,
    },
    settings: options.settings,
    shard,
    servers: results,
    run: {
      ledgerHead: "",
      shards: [{
        shard,
        servers: results.length,
        ledgerHead: "",
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        seconds: Math.round((performance.now() - t0) / 100) / 10,
        jobs,
      }],
    },
  });
  return await finishCensus(options.out, doc);
}

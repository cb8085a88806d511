/**
 * Check a definition against its seeded state: every mask must match a
 * field that exists in the seeded state, and every sqlite table named in
 * `business` / `append_only` must exist there. Seeds are materialised in
 * memory (SQL runs in the WASM engine), never on disk.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import type { Definition } from "./types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { seedPath } from "./seeds.ts";
import { fsExclusions, walkFs } from "../../adapters/fs.ts";
import { getPath } from "../state/json_path.ts";
import { loadSqlEngine } from "../../adapters/sql_engine.ts";
import { sqliteSeedImage } from "../state_io/reset.ts";
import { assembleSnapshot } from "../state_io/snapshot.ts";
import type { WorkerResult } from "../state_io/_worker_protocol.ts";
import type { Snapshot } from "../state/types.ts";

/**
 * The state a reset would produce, observed in memory. Requires
 * `--allow-read` on the definition directory. `sqliteRecords: false`:
 * sqlite tables with their columns only (no rows read: memory does not
 * follow the seed's size).
 */
export async function seededSnapshot(
  def: Definition,
  sqliteRecords = true,
): Promise<Snapshot> {
  const results: WorkerResult[] = [];
  for (const [i, a] of def.adapters.entries()) {
    const label = normalizeLabel(a.label);
    if (a.kind === "postgres") {
      // Seeded and checked in a real database when a run starts (postgres_cluster.ts).
      results.push({ kind: "postgres", label });
    } else if (a.kind === "sqlite") {
      results.push({
        kind: "sqlite",
        label,
        db: a.seed === null ? null : await sqliteSeedImage(def, a, i),
        wal: null,
      });
    } else if (a.kind === "json") {
      results.push({
        kind: "json",
        label,
        bytes: a.seed === null
          ? null
          : await Deno.readFile(seedPath(def, a.seed)),
      });
    } else {
      if (a.seed === null) {
        results.push({ kind: "fs", label, entries: [] });
        continue;
      }
      const walked = await walkFs(seedPath(def, a.seed), ".", []);
      const skip = new Set(fsExclusions(def.adapters, a));
      const entries = walked.entries
        .map((e) => ({
          ...e,
          path: label === "." ? e.path : `${label}/${e.path}`,
        }))
        .filter((e) =>
          ![...skip].some((s) => e.path === s || e.path.startsWith(s + "/"))
        );
      results.push({ kind: "fs", label, entries });
    }
  }
  const SQL = def.adapters.some((a) => a.kind === "sqlite" && a.seed !== null)
    ? await loadSqlEngine()
    : null;
  return assembleSnapshot(def, results, SQL, [], sqliteRecords);
}

/** Throw a {@linkcode DefinitionError} for the first mask or classification that matches nothing seeded. */
export async function checkSeededState(def: Definition): Promise<void> {
  const needed =
    def.adapters.some((a) =>
      a.seed !== null && (a.mask.length > 0 || a.kind === "sqlite")
    ) ||
    def.adapters.some((a) => a.mask.length > 0);
  if (!needed) return;
  // A sqlite table's check needs its name and columns, never its rows.
  const snap = await seededSnapshot(def, false);
  for (const [i, a] of def.adapters.entries()) {
    const label = normalizeLabel(a.label);
    if (a.kind === "postgres") continue;
    const mine = snap.regions.filter((r) =>
      r.adapter === label && r.kind === a.kind
    );
    const fail: (path: string, msg: string) => never = (path, msg) => {
      throw new DefinitionError(def.file, `adapters[${i}].${path}`, msg);
    };
    if (a.mask.length > 0 && a.seed === null) {
      fail(
        "mask[0]",
        "a mask must match the seeded state, but this adapter has no seed",
      );
    }
    if (a.kind === "sqlite" && a.seed !== null) {
      const tables = mine.map((r) => r.name);
      for (
        const [list, name] of [[a.business, "business"], [
          a.append_only,
          "append_only",
        ]] as const
      ) {
        list.forEach((t, j) => {
          if (!tables.includes(t)) {
            fail(
              `${name}[${j}]`,
              `table ${
                JSON.stringify(t)
              } is not in the seeded database (tables: ${
                tables.join(", ") || "none"
              })`,
            );
          }
        });
      }
    }
    a.mask.forEach((m, j) => {
      const region = mine.find((r) => r.name === m.region);
      if (!region) {
        fail(
          `mask[${j}].region`,
          `${
            JSON.stringify(m.region)
          } matches nothing in the seeded state (regions: ${
            mine.map((r) => r.name).join(", ") || "none"
          })`,
        );
      }
      if (a.kind === "sqlite") {
        if (!(region.columns ?? []).includes(m.column)) {
          fail(
            `mask[${j}].column`,
            `table ${m.region} has no column ${
              JSON.stringify(m.column)
            } (columns: ${(region.columns ?? []).join(", ")})`,
          );
        }
      } else if (
        !region.records.some((rec) =>
          getPath(rec.value, m.column) !== undefined
        )
      ) {
        fail(
          `mask[${j}].column`,
          `no seeded record of ${m.region} has a field ${
            JSON.stringify(m.column)
          }`,
        );
      }
    });
  }
}

/**
 * Check a definition against its seeded state: every mask must match a
 * field that exists in the seeded state, and every sqlite table named in
 * `business` / `append_only` must exist there. Seeds are materialised in
 * a temporary directory (a sqlite seed's tables and columns read from its
 * pages there, when its records are not wanted), never in the state
 * directory.
 *
 * @module
 */
import { isPattern } from "../state/classify.ts";
import { closestNames } from "../common/closest_names.ts";
import { DefinitionError } from "../errors.ts";
import type { Definition } from "../definition/types.ts";
import { normalizeLabel } from "../common/paths.ts";
import { seedPath } from "../definition/seeds.ts";
import { fsExclusions, walkFs } from "../../adapters/fs.ts";
import { getPath } from "../state/json_path.ts";
import { sqliteSeedImage } from "./reset.ts";
import { imagePageSource } from "../../adapters/sqlite/format.ts";
import {
  columnsFromPages,
  metaTables,
  type SqliteObservation,
} from "../../adapters/sqlite/read.ts";
import { PageWalkError } from "../../adapters/sqlite/page_walk_error.ts";
import { assembleSnapshot } from "./snapshot.ts";
import type { WorkerResult } from "./_worker_protocol.ts";
import type { Snapshot } from "../state/types.ts";

/**
 * The state a reset would produce, observed in memory, sqlite tables with
 * their columns only (no rows read: memory does not follow the seed's
 * size). Requires `--allow-read` on the definition directory.
 */
export async function seededSnapshot(def: Definition): Promise<Snapshot> {
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
        db: null,
        wal: null,
        ...(a.seed === null ? {} : { observed: await seedColumns(def, i) }),
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
  return assembleSnapshot(def, results);
}

/**
 * The tables and columns of adapter `index`'s sqlite seed, read from the
 * pages of the database it builds (`sqliteSeedImage`). Throws what
 * building the seed throws (a {@linkcode DefinitionError} for a failing
 * script), and a {@linkcode DefinitionError} naming the seed when its
 * pages cannot be read.
 */
export async function seedColumns(
  def: Definition,
  index: number,
): Promise<SqliteObservation> {
  const image = await sqliteSeedImage(def, def.adapters[index]!, index);
  try {
    const src = imagePageSource(image);
    const tables = [...columnsFromPages(src), ...metaTables(src, false)];
    tables.sort((x, y) => x.name < y.name ? -1 : x.name > y.name ? 1 : 0);
    return { tables, problems: [] };
  } catch (e) {
    if (!(e instanceof PageWalkError)) throw e;
    throw new DefinitionError(
      def.file,
      `adapters[${index}].seed`,
      `the seeded database cannot be read by verity's page reader: ${e.message}`,
    );
  }
}

/** Throw a {@linkcode DefinitionError} for the first mask or classification that matches nothing seeded. */
export async function checkSeededState(def: Definition): Promise<void> {
  const needed = def.adapters.some((a) =>
    a.mask.length > 0 || (a.seed !== null && a.kind === "sqlite")
  );
  if (!needed) return;
  const snap = await seededSnapshot(def);
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
      const absent = (t: string) => {
        const near = closestNames(t, tables);
        return `table ${JSON.stringify(t)} is not in the seeded database (${
          near.length
            ? `closest: ${near.join(", ")}`
            : `tables: ${tables.join(", ") || "none"}`
        }`;
      };
      for (
        const [list, name] of [[a.business, "business"], [
          a.append_only,
          "append_only",
        ]] as const
      ) {
        list.forEach((t, j) => {
          // A pattern (mcp_*) may name tables only a call creates.
          if (!tables.includes(t) && !isPattern(t)) {
            fail(
              `${name}[${j}]`,
              `${
                absent(t)
              }; classify a table only a call creates with a pattern, e.g. "mcp_*")`,
            );
          }
        });
      }
      for (const [table, cols] of Object.entries(a.key)) {
        const region = mine.find((r) => r.name === table);
        if (!region) fail(`key.${JSON.stringify(table)}`, `${absent(table)})`);
        cols.forEach((c, j) => {
          if (!(region.columns ?? []).includes(c)) {
            fail(
              `key.${JSON.stringify(table)}[${j}]`,
              `table ${table} has no column ${JSON.stringify(c)} (columns: ${
                (region.columns ?? []).join(", ")
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

/**
 * `verity verify-reset <definition>`: reset twice, snapshot both, and
 * require identical normalized state.
 *
 * Requires `--allow-read`, `--allow-write` (a temporary directory) and the
 * `worker-options` unstable feature.
 *
 * @module
 */
import { parseCommandLine } from "./args.ts";
import { UsageError } from "../errors.ts";
import { loadDefinition } from "../definition/load.ts";
import { checkSeededState } from "../state_io/seeded.ts";
import { coverage } from "../state/coverage.ts";
import type { CategoryDelta } from "../state/delta.ts";
import { verifyReset } from "../state_io/verify_reset.ts";

function fmt(v: unknown): string {
  return v === undefined ? "(absent)" : JSON.stringify(v);
}

function describeDelta(cat: string, d: CategoryDelta, limit: number): string[] {
  const lines: string[] = [];
  for (const a of d.added) lines.push(`${cat}: added ${a.region} ${a.key}`);
  for (const r of d.removed) lines.push(`${cat}: removed ${r.region} ${r.key}`);
  for (const t of d.structure) {
    lines.push(`${cat}: table ${t.region} ${t.change}`);
  }
  for (const c of d.changed) {
    lines.push(
      `${cat}: changed ${c.region} ${c.key}: ${
        c.fields.map((f) => `${f.field} ${fmt(f.before)} -> ${fmt(f.after)}`)
          .join("; ")
      }`,
    );
  }
  return lines.length > limit
    ? [...lines.slice(0, limit), `${cat}: … and ${lines.length - limit} more`]
    : lines;
}

/** Run `verity verify-reset`. */
export async function main(argv: string[]): Promise<number> {
  const p = parseCommandLine("verify-reset", argv, {
    json: { type: "boolean" },
    keep: { type: "boolean" },
  });
  if (p.positionals.length !== 1) {
    throw new UsageError(
      `verity verify-reset: expected exactly one definition, got ${p.positionals.length} (see verity verify-reset --help)`,
    );
  }
  const def = await loadDefinition(p.positionals[0]!);
  await checkSeededState(def);
  const v = await verifyReset(def, { keep: p.values.keep === true });
  const cov = coverage(def);
  if (p.values.json) {
    console.log(JSON.stringify(
      {
        definition: {
          name: def.name,
          kind: def.kind,
          file: def.file,
          digest: def.digest,
        },
        verified: v.verified,
        digests: v.digests,
        delta: v.delta,
        problems: v.problems,
        coverage: cov,
        regions: v.seeded.regions.map((r) => ({
          region: `${r.adapter}:${r.name}`,
          kind: r.kind,
          category: r.category,
          records: r.records.length,
        })),
        ...(p.values.keep ? { state_dirs: v.dirs } : {}),
      },
      null,
      2,
    ));
    return v.verified ? 0 : 1;
  }
  const records = v.seeded.regions.reduce((n, r) => n + r.records.length, 0);
  console.log(`${def.name} (${def.kind}, ${def.digest})`);
  console.log(
    `  reset: ${
      v.verified ? "verified" : "NOT verified: the two resets differ"
    }`,
  );
  console.log(
    `  state: ${v.seeded.regions.length} regions, ${records} records, ${
      v.digests[0]
    }`,
  );
  for (const r of v.seeded.regions) {
    console.log(
      `    ${r.kind} ${r.adapter}:${r.name}  ${r.category}  ${r.records.length} records`,
    );
  }
  const missing = cov.locations.filter((l) => l.observedBy === null).map((l) =>
    l.location
  );
  console.log(
    `  coverage: ${
      cov.complete
        ? "complete"
        : `partial (not observed: ${missing.join(", ")})`
    }`,
  );
  if (!v.verified) {
    if (v.digests[0] !== v.digests[1]) {
      console.log(`  second reset: ${v.digests[1]}`);
    }
    for (const cat of ["business", "append_only", "unclassified"] as const) {
      for (const line of describeDelta(cat, v.delta[cat], 50)) {
        console.log(`    ${line}`);
      }
    }
  }
  for (const pr of v.problems) console.log(`  problem: ${pr}`);
  if (p.values.keep) {
    console.log(`  state directories kept: ${v.dirs.join(" ")}`);
  }
  return v.verified ? 0 : 1;
}

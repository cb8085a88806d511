/**
 * One `[[adapters]]` table of a definition, read strictly. Private to
 * `parse.ts`. Pure.
 *
 * @module
 */
import { normalizeLabel } from "../common/paths.ts";
import type { AdapterDef, MaskRule } from "./types.ts";
import { describe, join, type Reader, relativePath } from "./_reader.ts";

const MASK_KINDS = ["timestamp", "uuid", "token", "counter"] as const;

/** Read one adapter table at `path` (e.g. `adapters[0]`). */
export function parseAdapter(r: Reader, v: unknown, path: string): AdapterDef {
  const t = r.table(v, path);
  if (!Object.hasOwn(t, "kind")) {
    r.fail(
      `${path}.kind`,
      'missing (one of "sqlite", "fs", "json", "postgres")',
    );
  }
  const kind = r.oneOf(t.kind, `${path}.kind`, [
    "sqlite",
    "fs",
    "json",
    "postgres",
  ]);
  const common = [
    "kind",
    "label",
    "seed",
    "business",
    "append_only",
    "mask",
    "exclude",
  ];
  r.keys(
    t,
    path,
    kind === "json"
      ? [...common, "key", "format", "region_by", "regions"]
      : kind === "postgres"
      ? [...common, "key", "listen"]
      : kind === "sqlite"
      ? [...common, "key"]
      : common,
  );
  if (!Object.hasOwn(t, "label")) {
    r.fail(
      `${path}.label`,
      'missing (path inside the state directory, e.g. "state.db")',
    );
  }
  const label = relativePath(
    r,
    r.nonEmptyString(t.label, `${path}.label`),
    `${path}.label`,
    "label",
  );
  if (kind === "postgres" && !/^[a-z_][a-z0-9_]{0,40}$/.test(label)) {
    r.fail(
      `${path}.label`,
      `a postgres adapter's label names its database: lower-case letters, digits and "_" (at most 41), got ${
        JSON.stringify(label)
      }`,
    );
  }
  if (kind !== "fs" && normalizeLabel(label) === ".") {
    r.fail(`${path}.label`, `a ${kind} adapter needs a file label, not "."`);
  }
  const seed = Object.hasOwn(t, "seed")
    ? relativePath(
      r,
      r.nonEmptyString(t.seed, `${path}.seed`),
      `${path}.seed`,
      "a seed path (inside the definition's directory)",
    )
    : null;
  const business: string[] = r.optional(t, path, "business", "strings", []);
  const append_only: string[] = r.optional(
    t,
    path,
    "append_only",
    "strings",
    [],
  );
  for (const [i, b] of business.entries()) {
    if (business.indexOf(b) !== i) {
      r.fail(`${path}.business[${i}]`, `duplicate ${JSON.stringify(b)}`);
    }
    const j = append_only.indexOf(b);
    if (j !== -1) {
      r.fail(
        `${path}.append_only[${j}]`,
        `${JSON.stringify(b)} is also listed in business`,
      );
    }
  }
  for (const [i, b] of append_only.entries()) {
    if (append_only.indexOf(b) !== i) {
      r.fail(`${path}.append_only[${i}]`, `duplicate ${JSON.stringify(b)}`);
    }
  }
  if (kind === "fs") {
    const base = normalizeLabel(label);
    for (
      const [list, name] of [[business, "business"], [
        append_only,
        "append_only",
      ]] as const
    ) {
      list.forEach((b, i) => {
        relativePath(r, b, `${path}.${name}[${i}]`, "an fs region path");
        const n = normalizeLabel(b);
        if (!(base === "." || n === base || n.startsWith(base + "/"))) {
          r.fail(
            `${path}.${name}[${i}]`,
            `${JSON.stringify(b)} is not inside the adapter's label ${
              JSON.stringify(label)
            }`,
          );
        }
      });
    }
  }
  const mask: MaskRule[] = [];
  if (Object.hasOwn(t, "mask")) {
    if (!Array.isArray(t.mask)) {
      r.fail(
        `${path}.mask`,
        `expected an array of {region, column, kind}, got ${describe(t.mask)}`,
      );
    }
    t.mask.forEach((m, i) => {
      const p = `${path}.mask[${i}]`;
      const mt = r.table(m, p);
      r.keys(mt, p, ["region", "column", "kind"]);
      for (const k of ["region", "column", "kind"]) {
        if (!Object.hasOwn(mt, k)) r.fail(`${p}.${k}`, "missing");
      }
      const mk = r.string(mt.kind, `${p}.kind`);
      if (!(MASK_KINDS as readonly string[]).includes(mk)) {
        r.fail(
          `${p}.kind`,
          `expected one of ${MASK_KINDS.join(", ")}, got ${JSON.stringify(mk)}`,
        );
      }
      mask.push({
        region: r.nonEmptyString(mt.region, `${p}.region`),
        column: r.nonEmptyString(mt.column, `${p}.column`),
        kind: mk as MaskRule["kind"],
      });
    });
  }
  // Labels (and fs region paths) are kept normalised ("notes/" -> "notes",
  // "./x.json" -> "x.json"), the form regions and coverage use.
  const fsPath = (p: string) => (kind === "fs" ? normalizeLabel(p) : p);
  const out: AdapterDef = {
    kind,
    label: normalizeLabel(label),
    seed,
    business: business.map(fsPath),
    append_only: append_only.map(fsPath),
    mask: mask.map((m) => ({ ...m, region: fsPath(m.region) })),
    key: {},
  };
  if (Object.hasOwn(t, "exclude")) {
    const exclude = r.strings(t.exclude, `${path}.exclude`);
    exclude.forEach((e, i) => {
      const at = `${path}.exclude[${i}]`;
      if (e === "") r.fail(at, "must not be empty");
      if (business.includes(e) || append_only.includes(e)) {
        r.fail(
          at,
          `${JSON.stringify(e)} is also classified; exclude or classify it`,
        );
      }
      if (kind === "fs") relativePath(r, e, at, "an fs path");
    });
    if (exclude.length > 0) out.exclude = exclude.map(fsPath);
  }
  if (kind === "json" || kind === "postgres" || kind === "sqlite") {
    if (Object.hasOwn(t, "key")) {
      const kt = r.table(t.key, `${path}.key`);
      for (const [region, fields] of Object.entries(kt)) {
        const fp = join(`${path}.key`, region);
        const list = r.strings(fields, fp);
        if (list.length === 0) r.fail(fp, "must name at least one field");
        out.key[region] = list;
      }
    }
  }
  if (kind === "postgres" && Object.hasOwn(t, "listen")) {
    const l = r.string(t.listen, `${path}.listen`);
    if (l !== "socket" && l !== "tcp") {
      r.fail(
        `${path}.listen`,
        `expected "socket" (the default: a Unix socket) or "tcp" (also 127.0.0.1 on a free port, for a server that cannot use a socket), got ${
          JSON.stringify(l)
        }`,
      );
    }
    out.listen = l;
  }
  if (kind === "json") {
    if (Object.hasOwn(t, "format")) {
      out.format = r.oneOf(t.format, `${path}.format`, ["json", "jsonl"]);
    }
    if (Object.hasOwn(t, "region_by")) {
      out.region_by = r.nonEmptyString(t.region_by, `${path}.region_by`);
    }
    if (Object.hasOwn(t, "regions")) {
      if (out.region_by !== undefined) {
        r.fail(`${path}.regions`, "use either regions or region_by, not both");
      }
      const rt = r.table(t.regions, `${path}.regions`);
      const regions: Record<string, string> = {};
      for (const [name, ptr] of Object.entries(rt)) {
        const pp = join(`${path}.regions`, name);
        const s = r.string(ptr, pp);
        if (s !== "" && !s.startsWith("/")) {
          r.fail(
            pp,
            `expected a JSON pointer such as "/items", got ${
              JSON.stringify(s)
            }`,
          );
        }
        regions[name] = s;
      }
      out.regions = regions;
      const ext = /\.(jsonl|ndjson)$/i.test(label) ? "jsonl" : "json";
      if ((out.format ?? ext) === "jsonl") {
        r.fail(
          `${path}.regions`,
          "regions (JSON pointers) apply to json documents, not jsonl",
        );
      }
    }
  }
  return out;
}

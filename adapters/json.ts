/**
 * The json adapter: a JSON or JSON Lines document turned into records. Pure.
 *
 * Documents are compared as values, never as bytes: reordered keys,
 * different whitespace or a missing trailing newline are not changes.
 *
 * - jsonl: every non-blank line is one record.
 * - json: a top-level array gives one record per element; any other
 *   document is one record with key `[]` (its fields are compared one by
 *   one). `regions = { name = "/pointer" }` instead picks arrays or objects
 *   of records inside the document (an object gives one record per member,
 *   keyed by the member name); what the pointers do not cover stays in a
 *   region named after the label.
 * - `region_by = "type"` splits records into regions named by that field's
 *   value (memory-server lines become regions `entity` and `relation`).
 * - `key = { region = ["type", "name"] }` identifies records by fields
 *   (dotted paths or JSON pointers); otherwise by their whole value.
 *   Repeated identities get `{"dup": n}` appended, so a duplicate shows as
 *   an added record.
 * - A record that is not an object is wrapped as `{"$value": x}`.
 *
 * @module
 */
import type { AdapterDef } from "../lib/definition/definition.ts";
import { makeKey, sortRecords } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";

/** One json region's records. */
export interface JsonRegion {
  name: string;
  records: StateRecord[];
}

/** What the adapter saw in one file. */
export interface JsonObservation {
  regions: JsonRegion[];
  problems: string[];
}

/** The format of a json adapter: declared, or from the label's extension. */
export function jsonFormat(
  def: Pick<AdapterDef, "format" | "label">,
): "json" | "jsonl" {
  if (def.format) return def.format;
  return /\.(jsonl|ndjson)$/i.test(def.label) ? "jsonl" : "json";
}

/** Split a path (`a.b` or JSON pointer `/a/b`) into segments. */
export function pathSegments(path: string): string[] {
  if (path.startsWith("/")) {
    return path.slice(1).split("/").map((s) =>
      s.replaceAll("~1", "/").replaceAll("~0", "~")
    );
  }
  if (path === "") return [];
  return path.split(".");
}

/** The value at a path, or undefined. */
export function getPath(v: unknown, path: string): unknown {
  let cur = v;
  for (const seg of pathSegments(path)) {
    if (cur === null || typeof cur !== "object") return undefined;
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else {
      if (!Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}

/** A copy of `v` with the value at `path` replaced by `f(old)`; unchanged when absent. */
export function replacePath(
  v: unknown,
  segs: readonly string[],
  f: (old: unknown) => unknown,
): unknown {
  if (segs.length === 0) return f(v);
  if (v === null || typeof v !== "object") return v;
  const [head, ...rest] = segs as [string, ...string[]];
  if (Array.isArray(v)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head)) return v;
    const i = Number(head);
    if (i >= v.length) return v;
    const copy = v.slice();
    copy[i] = replacePath(v[i], rest, f);
    return copy;
  }
  const o = v as Record<string, unknown>;
  if (!Object.hasOwn(o, head)) return v;
  return { ...o, [head]: replacePath(o[head], rest, f) };
}

function asValue(x: unknown): Record<string, unknown> {
  return x !== null && typeof x === "object" && !Array.isArray(x)
    ? x as Record<string, unknown>
    : { $value: x };
}

/**
 * Turn a json/jsonl file's text into regions of sorted records.
 *
 * @example
 * ```ts
 * const obs = readJsonState('{"type":"entity","name":"a"}\n', {
 *   kind: "json", label: "memory.jsonl", seed: null, business: [], append_only: [], mask: [],
 *   key: { entity: ["name"] }, region_by: "type",
 * });
 * obs.regions[0]?.name; // "entity"
 * ```
 */
export function readJsonState(text: string, def: AdapterDef): JsonObservation {
  const label = def.label;
  const problems: string[] = [];
  const format = jsonFormat(def);
  // Each item: the region it belongs to (null = decide by region_by), its identity override, its value.
  const items: {
    region: string | null;
    identity: unknown[] | null;
    value: unknown;
  }[] = [];
  const unparsed: StateRecord[] = [];
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (format === "jsonl") {
    const lines = body.split("\n");
    lines.forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        items.push({ region: null, identity: null, value: JSON.parse(line) });
      } catch (e) {
        problems.push(
          `${label}: line ${i + 1} is not valid JSON (${
            (e as Error).message
          }); kept as text`,
        );
        unparsed.push({
          key: makeKey([{ $unparsed: line }]),
          value: { $unparsed: line },
        });
      }
    });
  } else if (body.trim() !== "") {
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch (e) {
      problems.push(
        `${label}: not valid JSON (${(e as Error).message}); kept as text`,
      );
      unparsed.push({
        key: makeKey([{ $unparsed: body }]),
        value: { $unparsed: body },
      });
      doc = undefined;
    }
    if (doc !== undefined) {
      if (def.regions) {
        let rest: unknown = doc;
        for (const [name, ptr] of Object.entries(def.regions)) {
          const sel = getPath(doc, ptr);
          if (sel === undefined) continue;
          if (Array.isArray(sel)) {
            for (const x of sel) {
              items.push({ region: name, identity: null, value: x });
            }
          } else if (sel !== null && typeof sel === "object") {
            for (const [k, x] of Object.entries(sel)) {
              items.push({ region: name, identity: [k], value: x });
            }
          } else items.push({ region: name, identity: [], value: sel });
          rest = removePath(rest, pathSegments(ptr));
        }
        const restEmpty = rest !== null && typeof rest === "object" &&
          Object.keys(rest).length === 0;
        if (rest !== undefined && !restEmpty) {
          items.push({ region: label, identity: [], value: rest });
        }
      } else if (Array.isArray(doc)) {
        for (const x of doc) {
          items.push({ region: null, identity: null, value: x });
        }
      } else {
        items.push({ region: label, identity: [], value: doc });
      }
    }
  }
  const byRegion = new Map<string, StateRecord[]>();
  const add = (region: string, rec: StateRecord) => {
    let list = byRegion.get(region);
    if (!list) byRegion.set(region, list = []);
    list.push(rec);
  };
  for (const it of items) {
    let region = it.region;
    if (region === null) {
      const tag = def.region_by !== undefined
        ? getPath(it.value, def.region_by)
        : undefined;
      region = typeof tag === "string" && tag !== "" ? tag : label;
    }
    const keyFields = def.key[region];
    let identity: unknown[];
    if (keyFields) {
      identity = keyFields.map((f) => getPath(it.value, f) ?? null);
    } else if (it.identity !== null) identity = it.identity;
    else identity = [it.value];
    add(region, { key: makeKey(identity), value: asValue(it.value) });
  }
  for (const u of unparsed) add(label, u);
  const regions = [...byRegion.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, records]) => ({ name, records: sortRecords(records) }));
  return { regions, problems };
}

function removePath(v: unknown, segs: readonly string[]): unknown {
  if (segs.length === 0) return undefined;
  if (v === null || typeof v !== "object") return v;
  const [head, ...rest] = segs as [string, ...string[]];
  if (Array.isArray(v)) return v;
  const o = { ...(v as Record<string, unknown>) };
  if (!Object.hasOwn(o, head)) return v;
  if (rest.length === 0) delete o[head];
  else o[head] = removePath(o[head], rest);
  return o;
}

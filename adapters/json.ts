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
import type { AdapterDef } from "../lib/definition/types.ts";
import { makeKey, sortRecords } from "../lib/state/keys.ts";
import type { StateRecord } from "../lib/state/types.ts";
import { getPath, pathSegments, removePath } from "../lib/state/json_path.ts";
import { isPlainObject } from "../lib/common/is_plain_object.ts";

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

function asValue(x: unknown): Record<string, unknown> {
  return isPlainObject(x) ? x : { $value: x };
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
  // Declared, or from the label's extension.
  const format = def.format ??
    (/\.(jsonl|ndjson)$/i.test(def.label) ? "jsonl" : "json");
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

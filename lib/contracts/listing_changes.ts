/**
 * Declarations that change between sessions of one audit (a rug pull):
 * every session's `tools/list` pages compared, tool by tool, with the
 * listing the report keeps (`protocol.toolsList`). Pure.
 *
 * Tools are compared as parsed contracts (the tool object as read, and
 * each hint's state), never as bytes: a different JSON-RPC id or key
 * order is not a change.
 *
 * @module
 */
import { HINT_NAMES, parseToolPages } from "./contracts.ts";
import type { Contract } from "./contracts.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** One session whose listing declared a tool differently from the first listing. */
export interface DeclarationChange {
  /** The session: `<kind> <tool or null> <run>`, as its record names it. */
  session: string;
  /** What moved: top-level fields, `annotations.<hint>`, or `listed` (the tool is missing on one side). */
  fields: string[];
  /** The tool object in the first listing (null: not listed there). */
  first: Record<string, unknown> | null;
  /** The tool object in that session's listing (null: not listed there). */
  then: Record<string, unknown> | null;
}

/** A session's listing, when it was kept (it differs from the first). */
export interface SessionListing {
  kind: string;
  tool: string | null;
  run: number;
  /** The session's raw `tools/list` pages. */
  toolsList?: string[];
}

/** JSON with object keys sorted, for comparing values read from the wire. */
function canon(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${
      Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canon(o[k])}`)
        .join(",")
    }}`;
  }
  return JSON.stringify(v ?? null);
}

function byName(pages: readonly string[]): Map<string, Contract> {
  const out = new Map<string, Contract>();
  for (const c of parseToolPages(pages).contracts) {
    if (!out.has(c.name)) out.set(c.name, c);
  }
  return out;
}

/** The fields in which two contracts of one tool differ (empty: the same). */
function movedFields(
  a: Contract | undefined,
  b: Contract | undefined,
): string[] {
  if (a === undefined || b === undefined) {
    return a === b ? [] : ["listed"];
  }
  const fields: string[] = [];
  const keys = [...new Set([...Object.keys(a.raw), ...Object.keys(b.raw)])]
    .sort();
  for (const k of keys) {
    if (k === "annotations") continue;
    if (canon(a.raw[k]) !== canon(b.raw[k])) fields.push(k);
  }
  // Hints by their parsed state (a duplicated key is MALFORMED on one side only).
  for (const h of HINT_NAMES) {
    if (canon(a.hints[h].toJSON()) !== canon(b.hints[h].toJSON())) {
      fields.push(`annotations.${h}`);
    }
  }
  const ann = (c: Contract) =>
    isPlainObject(c.raw.annotations) ? c.raw.annotations : {};
  const ak = [...new Set([...Object.keys(ann(a)), ...Object.keys(ann(b))])]
    .filter((k) => !(HINT_NAMES as readonly string[]).includes(k)).sort();
  for (const k of ak) {
    if (canon(ann(a)[k]) !== canon(ann(b)[k])) fields.push(`annotations.${k}`);
  }
  if (
    canon(a.raw.annotations) !== canon(b.raw.annotations) &&
    !fields.some((f) => f.startsWith("annotations"))
  ) fields.push("annotations");
  return fields;
}

/** Whether two listings declare every tool the same (the same tools, the same contracts). */
export function sameListing(
  a: readonly string[],
  b: readonly string[],
): boolean {
  const x = byName(a);
  const y = byName(b);
  if (x.size !== y.size) return false;
  for (const [name, c] of x) {
    if (movedFields(c, y.get(name)).length > 0) return false;
  }
  return true;
}

/**
 * Every change of every tool's declaration, by tool name: each session that
 * kept its own listing compared with the first (`reference`), each tool's
 * changes sorted by session.
 *
 * @example
 * ```ts
 * import { deepStrictEqual as assertEquals } from "node:assert/strict";
 * const page = (ro: boolean) =>
 *   `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"get","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":${ro}}}]}}`;
 * const changes = listingChanges([page(true)], [
 *   { kind: "once", tool: "get", run: 2, toolsList: [page(false)] },
 * ]);
 * assertEquals(changes.get("get")?.[0]?.fields, ["annotations.readOnlyHint"]);
 * ```
 */
export function listingChanges(
  reference: readonly string[],
  sessions: readonly SessionListing[],
): Map<string, DeclarationChange[]> {
  const first = byName(reference);
  const out = new Map<string, DeclarationChange[]>();
  for (const s of sessions) {
    if (s.toolsList === undefined) continue;
    const then = byName(s.toolsList);
    const names = [...new Set([...first.keys(), ...then.keys()])].sort();
    for (const name of names) {
      const a = first.get(name);
      const b = then.get(name);
      const fields = movedFields(a, b);
      if (fields.length === 0) continue;
      const list = out.get(name) ?? [];
      list.push({
        session: `${s.kind} ${s.tool} ${s.run}`,
        fields,
        first: a?.raw ?? null,
        then: b?.raw ?? null,
      });
      out.set(name, list);
    }
  }
  // In session order, whatever order the sessions finished in.
  for (const list of out.values()) {
    list.sort((a, b) =>
      a.session < b.session ? -1 : a.session > b.session ? 1 : 0
    );
  }
  return out;
}

/** One line a person reads: which session declared what differently. */
export function describeChange(c: DeclarationChange): string {
  const kind = c.session.slice(0, c.session.indexOf(" "));
  const run = c.session.slice(c.session.lastIndexOf(" ") + 1);
  const tool = c.session.slice(
    kind.length + 1,
    c.session.length - run.length - 1,
  );
  const where = `${kind} run ${run}${tool === "null" ? "" : ` of ${tool}`}`;
  if (c.first === null) {
    return `${where}: listed a tool the first listing did not`;
  }
  if (c.then === null) return `${where}: did not list the tool`;
  return `${where}: ${c.fields.join(", ")}`;
}

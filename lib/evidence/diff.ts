/**
 * Drift between two declarations: tools added, removed, or whose contract
 * moved, and which fields moved (description text, schema paths, hints).
 * Pure.
 *
 * Two declarations whose tools were hashed under different recipes are not
 * compared: the result is `recipe_mismatch`, never drift.
 *
 * @module
 */
import { canonicalJson } from "./canonical.ts";
import type { Declaration, DeclaredTool } from "./manifest.ts";
import { readField, type Recipe, RECIPE_FIELDS } from "./recipes.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** Display names (MCP spelling) of the payload fields. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  name: "name",
  description: "description",
  input_schema: "inputSchema",
  permissions: "permissions",
  output_schema: "outputSchema",
  annotations: "annotations",
  title: "title",
  execution: "execution",
};

/** One change at a path inside a field (`""` is the whole field). */
export interface PathChange {
  /** JSON pointer inside the field, e.g. `/properties/path/type`. */
  path: string;
  op: "added" | "removed" | "changed";
  from?: unknown;
  to?: unknown;
}

/** A field of a contract that moved. */
export interface ContractFieldChange {
  /** The field's MCP name (`inputSchema`, `annotations`, ...). */
  field: string;
  /** Whether the field was present in each declaration (absent hashes as its default). */
  present: { a: boolean; b: boolean };
  changes: PathChange[];
}

/** A tool whose contract hash moved. */
export interface ChangedTool {
  name: string;
  from: string;
  to: string;
  fields: ContractFieldChange[];
}

/** A tool present on one side only. */
export interface ToolRef {
  name: string;
  contract_hash: string;
}

/** A tool the two declarations hash under different recipes. */
export interface RefusedTool {
  name: string;
  a_recipe: Recipe;
  b_recipe: Recipe;
}

/** One side of a diff: its file, server, recipe and tool count. */
export type DiffSide =
  & Pick<Declaration, "file" | "server" | "version" | "recipe">
  & {
    tools: number;
  };

/** What {@linkcode diffDeclarations} found. */
export interface DiffResult {
  status: "identical" | "drift" | "recipe_mismatch";
  /** The recipe both sides were hashed under (null on recipe_mismatch). */
  recipe: Recipe | null;
  a: DiffSide;
  b: DiffSide;
  added: ToolRef[];
  removed: ToolRef[];
  changed: ChangedTool[];
  unchanged: number;
  /** Fields outside the recipe that differ (not drift under this recipe; informational). */
  outside_recipe: { name: string; fields: string[] }[];
  /** Set on recipe_mismatch: the tools that could not be compared. */
  refused: RefusedTool[];
}

function escapeToken(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Longest common subsequence of two arrays of canonical strings: matched index pairs. */
function lcs(a: string[], b: string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const t: number[][] = Array.from(
    { length: n + 1 },
    () => new Array<number>(m + 1).fill(0),
  );
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i]![j] = a[i] === b[j]
        ? t[i + 1]![j + 1]! + 1
        : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
    }
  }
  const pairs: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (t[i + 1]![j]! >= t[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

/**
 * Every difference between two JSON values, as JSON-pointer paths.
 * Objects compare key by key; arrays of equal length element by element;
 * arrays of different length by longest common subsequence (an inserted
 * element is one `added`, not a cascade of changes).
 *
 * @example
 * ```ts
 * jsonChanges({ enum: ["a", "b"] }, { enum: ["a"] });
 * // [{ path: "/enum/1", op: "removed", from: "b" }]
 * ```
 */
export function jsonChanges(a: unknown, b: unknown, path = ""): PathChange[] {
  if (same(a, b)) return [];
  if (isPlainObject(a) && isPlainObject(b)) {
    const out: PathChange[] = [];
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const p = `${path}/${escapeToken(k)}`;
      const inA = Object.hasOwn(a, k) && a[k] !== undefined;
      const inB = Object.hasOwn(b, k) && b[k] !== undefined;
      if (inA && !inB) out.push({ path: p, op: "removed", from: a[k] });
      else if (!inA && inB) out.push({ path: p, op: "added", to: b[k] });
      else if (inA && inB) out.push(...jsonChanges(a[k], b[k], p));
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length === b.length) {
      const out: PathChange[] = [];
      for (let i = 0; i < a.length; i++) {
        out.push(...jsonChanges(a[i], b[i], `${path}/${i}`));
      }
      return out;
    }
    const ca = a.map((x) => canonicalJson(x));
    const cb = b.map((x) => canonicalJson(x));
    const pairs = lcs(ca, cb);
    const keptA = new Set(pairs.map(([i]) => i));
    const keptB = new Set(pairs.map(([, j]) => j));
    const out: PathChange[] = [];
    a.forEach((x, i) => {
      if (!keptA.has(i)) {
        out.push({ path: `${path}/${i}`, op: "removed", from: x });
      }
    });
    b.forEach((x, j) => {
      if (!keptB.has(j)) out.push({ path: `${path}/${j}`, op: "added", to: x });
    });
    return out;
  }
  return [{ path, op: "changed", from: a, to: b }];
}

/** The fields of a contract that moved between two declarations of one tool, under a recipe. */
export function movedFields(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  recipe: Recipe,
): ContractFieldChange[] {
  const out: ContractFieldChange[] = [];
  for (const f of RECIPE_FIELDS[recipe]) {
    const ra = readField(a, f);
    const rb = readField(b, f);
    const changes = jsonChanges(ra.value, rb.value);
    if (changes.length === 0) continue;
    out.push({
      field: FIELD_LABELS[f.field] ?? f.field,
      present: { a: ra.present, b: rb.present },
      changes,
    });
  }
  return out;
}

const CONTRACT_KEYS = new Set(
  Object.values(RECIPE_FIELDS).flatMap((fs) =>
    fs.flatMap((f) => [...f.sources])
  ),
);
const BOOKKEEPING = new Set(["contract_recipe", "contract_hash"]);

function outsideRecipe(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  recipe: Recipe,
): string[] {
  const inRecipe = new Set(
    RECIPE_FIELDS[recipe].flatMap((f) => [...f.sources]),
  );
  const out: string[] = [];
  // Recipe fields the recipe does not cover, then any other key.
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of [...keys].sort()) {
    if (inRecipe.has(k) || BOOKKEEPING.has(k)) continue;
    if (
      !same(a[k] ?? null, b[k] ?? null) ||
      Object.hasOwn(a, k) !== Object.hasOwn(b, k)
    ) {
      out.push(CONTRACT_KEYS.has(k) ? (FIELD_LABELS[k] ?? k) : k);
    }
  }
  return out;
}

function ref(t: DeclaredTool): ToolRef {
  return { name: t.name, contract_hash: t.hash };
}

/**
 * Compare two declarations tool by tool (by name). Contracts are compared
 * by hash; for each that moved, the fields that moved are named.
 *
 * @example
 * ```ts ignore
 * const r = diffDeclarations(readDeclaration(a, "a.json"), readDeclaration(b, "b.json"));
 * // r.status: "identical" | "drift" | "recipe_mismatch"
 * ```
 */
export function diffDeclarations(a: Declaration, b: Declaration): DiffResult {
  const side = (d: Declaration): DiffSide => ({
    file: d.file,
    server: d.server,
    version: d.version,
    recipe: d.recipe,
    tools: d.tools.length,
  });
  const byA = new Map(a.tools.map((t) => [t.name, t]));
  const byB = new Map(b.tools.map((t) => [t.name, t]));
  const result: DiffResult = {
    status: "identical",
    recipe: null,
    a: side(a),
    b: side(b),
    added: [],
    removed: [],
    changed: [],
    unchanged: 0,
    outside_recipe: [],
    refused: [],
  };
  for (const ta of a.tools) {
    const tb = byB.get(ta.name);
    if (tb && ta.recipe !== tb.recipe) {
      result.refused.push({
        name: ta.name,
        a_recipe: ta.recipe,
        b_recipe: tb.recipe,
      });
    }
  }
  const sideRecipes = (d: Declaration) =>
    d.tools.length === 0 ? [d.recipe] : d.tools.map((t) => t.recipe);
  const ra = sideRecipes(a);
  const rb = sideRecipes(b);
  const recipes = new Set([...ra, ...rb]);
  if (recipes.size > 1) {
    result.status = "recipe_mismatch";
    if (result.refused.length === 0) {
      result.refused.push({
        name: "*",
        a_recipe: ra[0] ?? a.recipe,
        b_recipe: rb[0] ?? b.recipe,
      });
    }
    return result;
  }
  const recipe: Recipe = [...recipes][0] ?? a.recipe;
  result.recipe = recipe;
  for (const ta of a.tools) {
    const tb = byB.get(ta.name);
    if (!tb) {
      result.removed.push(ref(ta));
      continue;
    }
    if (ta.hash === tb.hash) result.unchanged++;
    else {
      result.changed.push({
        name: ta.name,
        from: ta.hash,
        to: tb.hash,
        fields: movedFields(ta.tool, tb.tool, recipe),
      });
    }
    const outside = outsideRecipe(ta.tool, tb.tool, recipe);
    if (outside.length > 0) {
      result.outside_recipe.push({ name: ta.name, fields: outside });
    }
  }
  for (const tb of b.tools) if (!byA.has(tb.name)) result.added.push(ref(tb));
  if (result.added.length + result.removed.length + result.changed.length > 0) {
    result.status = "drift";
  }
  return result;
}

function short(v: unknown, max = 100): string {
  let s: string;
  try {
    s = canonicalJson(v);
  } catch {
    s = String(v);
  }
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

function shortHash(h: string): string {
  return h.slice(0, 19);
}

/** Render a diff for people: one block per moved tool, field paths indented. */
export function renderDiff(r: DiffResult): string {
  const lines: string[] = [];
  const name = (s: DiffSide) =>
    `${s.file} (${s.server ?? "unnamed server"}${
      s.version ? " " + s.version : ""
    }, ${s.tools} tools, recipe ${s.recipe})`;
  lines.push(`a: ${name(r.a)}`);
  lines.push(`b: ${name(r.b)}`);
  if (r.status === "recipe_mismatch") {
    lines.push("");
    lines.push(
      "recipe_mismatch: the two declarations are hashed under different recipes; comparison refused (this is not drift).",
    );
    for (const t of r.refused) {
      lines.push(
        `  ${
          t.name === "*" ? "manifest" : t.name
        }: recipe ${t.a_recipe} in a, recipe ${t.b_recipe} in b`,
      );
    }
    lines.push(
      "Recapture one side with --recipe, or re-derive both from their raw tools with verity diff --recipe N.",
    );
    return lines.join("\n");
  }
  lines.push("");
  for (const t of r.removed) {
    lines.push(`- ${t.name}  removed (${shortHash(t.contract_hash)}…)`);
  }
  for (const t of r.added) {
    lines.push(`+ ${t.name}  added (${shortHash(t.contract_hash)}…)`);
  }
  for (const t of r.changed) {
    lines.push(`~ ${t.name}  ${shortHash(t.from)}… → ${shortHash(t.to)}…`);
    for (const f of t.fields) {
      const presence = f.present.a === f.present.b
        ? ""
        : f.present.a
        ? " (absent in b)"
        : " (absent in a)";
      if (
        typeof f.changes[0]?.from === "string" && f.changes.length === 1 &&
        f.changes[0].path === ""
      ) {
        const c = f.changes[0];
        lines.push(`    ${f.field}: text changed${presence}`);
        lines.push(`      - ${JSON.stringify(c.from)}`);
        lines.push(`      + ${JSON.stringify(c.to)}`);
        continue;
      }
      lines.push(`    ${f.field}${presence}:`);
      for (const c of f.changes) {
        const at = c.path === "" ? "(whole field)" : c.path;
        if (c.op === "added") lines.push(`      ${at}: added ${short(c.to)}`);
        else if (c.op === "removed") {
          lines.push(`      ${at}: removed ${short(c.from)}`);
        } else lines.push(`      ${at}: ${short(c.from)} → ${short(c.to)}`);
      }
    }
  }
  for (const o of r.outside_recipe) {
    lines.push(
      `  ${o.name}: also differs outside recipe ${r.recipe} (not drift under it): ${
        o.fields.join(", ")
      }`,
    );
  }
  lines.push("");
  const n = r.added.length + r.removed.length + r.changed.length;
  lines.push(
    r.status === "identical"
      ? `identical under recipe ${r.recipe}: ${r.unchanged} tools, no contract moved`
      : `drift under recipe ${r.recipe}: ${n} tool(s) moved (${r.changed.length} changed, ${r.added.length} added, ${r.removed.length} removed), ${r.unchanged} unchanged`,
  );
  return lines.join("\n");
}

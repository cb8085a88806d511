/**
 * What an audit with no definition learns, as data: the values seen in the
 * seed and in earlier answers (ids, names, paths), arguments derived from
 * them, and the target definition that records it all. Pure.
 *
 * A generated argument that identifies something (its property's last
 * word is `id`, `name` or `path`, or one standing for them: `uuid`, `key`,
 * `file`, `source`, `directory`, ...) takes a value seen before under the
 * same name or the same last word (`entityName` takes a seen `name`), so a
 * later tool is called on a record that exists; other values (a title, a
 * body) stay generated, so a call that overwrites one really changes it. An
 * object inside the arguments whose properties are all in one seen object
 * takes that object's values (a relation `{from, to, relationType}` as
 * stored). Every value says where it came from.
 *
 * @module
 */
import { isPlainObject } from "../common/is_plain_object.ts";
import type { LearnedAim } from "../definition/types.ts";
import { validateSchema } from "../reality/schema_validate.ts";
import { showControls } from "../common/show_controls.ts";

/** One value seen, and where. */
export interface SeenValue {
  /** The property it was under (an array's elements: the singular of its name). */
  name: string;
  value: string | number;
  from: string;
}

/** One object seen (a stored record, an argument or answer object), and where. */
export interface SeenObject {
  value: Record<string, unknown>;
  from: string;
}

/** Where one argument value came from: generated from the schema, or derived. */
export interface ArgumentOrigin {
  /** Into the arguments, e.g. `entities[0].name`. */
  path: string;
  value: unknown;
  /** `generated` (the schema) or `derived from <where it was seen>`. */
  from: string;
}

/** Values seen so far, in the order seen (the first seen is preferred). */
export class ValuePool {
  #values: SeenValue[] = [];
  #objects: SeenObject[] = [];

  /** Every value seen. */
  get values(): readonly SeenValue[] {
    return this.#values;
  }

  /**
   * Keep every named value and object inside `v` as seen `from`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * const pool = new ValuePool();
   * pool.add({ notes: [{ id: 7, title: "Groceries" }] }, "answer of add_note");
   * assert.deepEqual(pool.values.map((s) => [s.name, s.value]), [["id", 7], ["title", "Groceries"]]);
   * ```
   */
  add(v: unknown, from: string, name = "", depth = 0): void {
    if (depth > 8 || this.#values.length > 5000) return;
    if (
      typeof v === "string" &&
      /\{[A-Za-z_]\w*\}/.test(v.replace(/^\{state\}/, ""))
    ) {
      return; // would read as a placeholder in the learned target
    }
    if (typeof v === "string" || typeof v === "number") {
      if (
        name !== "" &&
        (typeof v === "number" || (v.length > 0 && v.length <= 512))
      ) {
        this.#values.push({ name, value: v, from });
      }
    } else if (Array.isArray(v)) {
      const one = singular(name);
      for (const x of v.slice(0, 50)) this.add(x, from, one, depth + 1);
    } else if (isPlainObject(v)) {
      this.#objects.push({ value: v, from });
      for (const [k, x] of Object.entries(v)) this.add(x, from, k, depth + 1);
    }
  }

  /**
   * Keep what an answer (`tools/call` result) shows: its `structuredContent`,
   * every text content that parses as JSON, and absolute paths in other text.
   */
  addAnswer(result: unknown, from: string): void {
    if (!isPlainObject(result)) return;
    if (result.structuredContent !== undefined) {
      this.add(result.structuredContent, from);
    }
    const content = Array.isArray(result.content) ? result.content : [];
    for (const c of content.slice(0, 20)) {
      if (!isPlainObject(c) || typeof c.text !== "string") continue;
      const text = c.text.slice(0, 64 * 1024);
      let parsed: unknown = undefined;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: paths only
      }
      if (parsed !== undefined && typeof parsed === "object") {
        this.add(parsed, from);
        continue;
      }
      for (
        const m of text.matchAll(
          /(?:^|[\s"'(:=])(\/[\w.@+-]+(?:\/[\w.@+-]+)*)/g,
        )
      ) {
        this.add(m[1]!, from, "path");
      }
    }
  }

  /** The first value seen under a name that `name` stands for, of the same type as `like`; null when `name` identifies nothing. */
  find(name: string, like: unknown): SeenValue | null {
    const want = nameGroup(name);
    if (!IDENTIFIES.has(want)) return null;
    const same = this.#values.find((s) =>
      s.name.toLowerCase() === name.toLowerCase() &&
      typeof s.value === typeof like
    );
    return same ??
      this.#values.find((s) =>
        typeof s.value === typeof like && nameGroup(s.name) === want
      ) ?? null;
  }

  /** Whether `value` was seen under `name`. */
  seen(name: string, value: unknown): boolean {
    return this.#values.some((s) => s.name === name && s.value === value);
  }

  /**
   * The first object seen that `v` could be a reference to: every key of
   * `v` is a key of it with a value of the same kind, or names it (an
   * identifying `entityName` for its `name`); at least two keys, or one
   * identifying key matched by name. Null: none.
   */
  matchObject(
    v: Record<string, unknown>,
  ): { seen: SeenObject; fields: Record<string, string> } | null {
    const keys = Object.keys(v);
    if (keys.length === 0) return null;
    const kind = (x: unknown) => Array.isArray(x) ? "array" : typeof x;
    for (const o of this.#objects) {
      const fields: Record<string, string> = {};
      let byName = false;
      for (const k of keys) {
        const same = Object.hasOwn(o.value, k) ? k : Object.keys(o.value).find(
          (sk) =>
            IDENTIFIES.has(nameGroup(k)) && nameGroup(sk) === nameGroup(k),
        );
        if (same === undefined || kind(o.value[same]) !== kind(v[k])) break;
        if (kind(v[k]) === "object") break;
        if (same !== k) byName = true;
        fields[k] = same;
      }
      if (
        Object.keys(fields).length === keys.length &&
        (keys.length >= 2 || byName)
      ) return { seen: o, fields };
    }
    return null;
  }
}

/** The last words of a property that identifies a record. */
const IDENTIFIES = new Set(["id", "name", "path"]);

const SYNONYMS: Record<string, string> = {
  file: "path",
  filepath: "path",
  filename: "path",
  dir: "path",
  directory: "path",
  folder: "path",
  source: "path",
  src: "path",
  uuid: "id",
  key: "id",
};

/** `entityNames` → `entityName`, `paths` → `path` (a plain English plural only). */
function singular(name: string): string {
  return name.length > 3 && name.endsWith("s") && !name.endsWith("ss")
    ? name.slice(0, -1)
    : name;
}

/** The last word of a property name, with its synonyms folded: `entityName` → `name`, `filePath` → `path`. */
function nameGroup(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").split(/[\s_.-]+/)
    .filter((w) => w !== "");
  const last = (words.at(-1) ?? name).toLowerCase();
  return SYNONYMS[last] ?? last;
}

/**
 * Arguments derived from `generated` and the values in `pool`, validated
 * against the tool's `inputSchema` (arguments that would break it stay
 * generated), with the origin of every leaf value.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const pool = new ValuePool();
 * pool.add({ name: "Alice", entityType: "person" }, "seed memory.jsonl");
 * const d = deriveArguments({ entityNames: ["Jordan"] }, pool, undefined);
 * assert.deepEqual(d.arguments, { entityNames: ["Alice"] });
 * assert.equal(d.origins[0]!.from, "derived from seed memory.jsonl");
 * ```
 */
export function deriveArguments(
  generated: Record<string, unknown>,
  pool: ValuePool,
  inputSchema: unknown,
): { arguments: Record<string, unknown>; origins: ArgumentOrigin[] } {
  const schema = inputSchema === undefined ? { type: "object" } : inputSchema;
  // Changed values first (a stored title given again would change
  // nothing), then derived ones only, then the generated arguments.
  for (const fresh of [true, false]) {
    const origins: ArgumentOrigin[] = [];
    const derived = walk(generated, "", "", pool, origins, fresh) as Record<
      string,
      unknown
    >;
    if (origins.every((o) => o.from === "generated")) {
      return { arguments: derived, origins };
    }
    if (validateSchema(schema, derived).status === "valid") {
      return { arguments: derived, origins };
    }
  }
  const plain: ArgumentOrigin[] = [];
  walk(generated, "", "", new ValuePool(), plain, false);
  return { arguments: generated, origins: plain };
}

function walk(
  v: unknown,
  path: string,
  name: string,
  pool: ValuePool,
  origins: ArgumentOrigin[],
  fresh: boolean,
): unknown {
  if (Array.isArray(v)) {
    const one = singular(name);
    const used = new Set<unknown>();
    return v.map((x, i) => {
      if (typeof x !== "string" && typeof x !== "number") {
        return walk(x, `${path}[${i}]`, one, pool, origins, fresh);
      }
      // Several elements: distinct seen values where there are some.
      const s = pool.find(one, x);
      const value = s !== null && !used.has(s.value) ? s.value : x;
      used.add(value);
      origins.push({
        path: `${path}[${i}]`,
        value,
        from: value === x || s === null
          ? "generated"
          : `derived from ${s.from}`,
      });
      return value;
    });
  }
  if (isPlainObject(v)) {
    // The arguments themselves are never copied whole (a retitle would
    // get the stored title back); an object inside them may be: a
    // reference to a stored record takes that record's values.
    const whole = path === "" ? null : pool.matchObject(v);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      const at = path === "" ? k : `${path}.${k}`;
      if (whole !== null) {
        const got = whole.seen.value[whole.fields[k]!];
        out[k] = Array.isArray(got) && Array.isArray(x)
          ? got.slice(0, Math.max(1, x.length))
          : got;
        origins.push({
          path: at,
          value: out[k],
          from: `derived from ${whole.seen.from}`,
        });
      } else out[k] = walk(x, at, k, pool, origins, fresh);
    }
    return out;
  }
  if (typeof v === "string" || typeof v === "number") {
    const s = name === "" ? null : pool.find(name, v);
    if (s === null && fresh && typeof v === "string" && pool.seen(name, v)) {
      const value = `${v} (changed)`;
      origins.push({
        path,
        value,
        from: "generated, changed from a value seen in the seed",
      });
      return value;
    }
    origins.push({
      path,
      value: s?.value ?? v,
      from: s === null ? "generated" : `derived from ${s.from}`,
    });
    return s?.value ?? v;
  }
  if (v !== undefined) origins.push({ path, value: v, from: "generated" });
  return v;
}

/**
 * A learned target's name from its command line: the package or script it
 * runs (`@scope/server-memory@1.0` → `server-memory`), letters, digits,
 * `.`, `_` and `-` only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(learnedName(["npx", "-y", "@modelcontextprotocol/server-memory@2026.8.31"]), "server-memory");
 * assert.equal(learnedName(["deno", "run", "fixtures/zero-home/server.ts"]), "zero-home");
 * ```
 */
export function learnedName(command: readonly string[]): string {
  const arg =
    command.slice(1).find((a) =>
      !a.startsWith("-") && !["run", "exec", "x", "dlx"].includes(a)
    ) ?? command[0] ?? "server";
  const parts = arg.replace(/^npm:/, "").replace(/(.)@[^/]*$/, "$1").split("/")
    .filter((x) => x !== "");
  // fixtures/zero-home/server.ts: the directory names it.
  const generic = /^(server|index|main|mod|cli)\.[a-z]+$/i.test(
    parts.at(-1) ?? "",
  );
  const base = (generic ? parts.at(-2) : parts.at(-1)) ?? parts.at(-1) ??
    "server";
  const name = base.replace(/\.[a-z]+$/i, "").replace(/[^A-Za-z0-9._-]/g, "_")
    .replace(/^[^A-Za-z0-9]+/, "").slice(0, 64);
  return name === "" ? "server" : name;
}

/** What {@linkcode renderLearned} shows: the seeding steps and every argument's origin. */
export interface LearnedView {
  /** The learned target's `target.toml`. */
  target: string;
  files: readonly { path: string; kind: string }[];
  steps: readonly {
    tool: string;
    outcome: string;
    detail: string;
    origins: readonly ArgumentOrigin[];
  }[];
  calls: readonly {
    tool: string;
    variant: string | null;
    origins: readonly ArgumentOrigin[];
    learned: LearnedAim;
  }[];
}

/** What an argument set names in the seed (`learned` in the target). */
export function learnedAim(
  origins: readonly ArgumentOrigin[],
  seedEmpty: boolean,
): LearnedAim {
  if (seedEmpty) return "empty_seed";
  if (origins.length === 0) return "no_arguments";
  return origins.some((o) => o.from.startsWith("derived"))
    ? "names_seed_record"
    : "names_nothing";
}

/** One line per argument value: its path, the value (cut at 80) and where it came from. */
export function originLines(origins: readonly ArgumentOrigin[]): string[] {
  return origins.map((o) =>
    `      ${o.path === "" ? "(arguments)" : o.path} = ${
      JSON.stringify(o.value)?.slice(0, 80)
    }  ${o.from}`
  );
}

/**
 * The text lines of what an audit with no definition learned: state files
 * and kinds, each seeding call and what became of it, and every argument
 * of the battery with where it came from. Every line is one line: the
 * server's control characters in it are written as visible escapes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const text = renderLearned({
 *   target: "t/target.toml",
 *   files: [],
 *   steps: [],
 *   calls: [{
 *     tool: "rm\u001b[2K",
 *     variant: null,
 *     origins: [{ path: "id", value: 1, from: "derived from the answer of ls" }],
 *     learned: "names_seed_record",
 *   }],
 * });
 * assert.match(text, /rm\\u\{1b\}\[2K\n {6}id = 1 {2}derived from the answer of ls/);
 * ```
 */
export function renderLearned(l: LearnedView): string {
  const lines = [
    `learned target: ${l.target} (no definition; seeding by use)`,
    `  state files: ${
      l.files.length === 0
        ? `none (every seeding call errored, changed nothing or lost records): the seed is empty, so no destructive claim can fail here (NOTHING_TO_CHANGE)${
          l.steps.some((s) => s.detail.includes("Requires write access to"))
            ? "; the sandbox refused writes outside the state directory (the seeding lines name them): give the server a path under {state} (its arguments, or --env 'NAME={state}/file')"
            : ""
        }`
        : l.files.map((f) => `${f.path} (${f.kind})`).join(", ")
    }`,
    "  seeding:",
  ];
  for (const s of l.steps) {
    lines.push(`    ${s.tool}: ${s.outcome}: ${s.detail}`);
    lines.push(...originLines(s.origins));
  }
  lines.push("  arguments of the battery:");
  for (const c of l.calls) {
    lines.push(
      `    ${c.variant === null ? c.tool : `${c.tool}[${c.variant}]`}${
        c.learned === "names_nothing"
          ? "  (no argument names a record seen: if it changes nothing, its destructive test is NOTHING_TO_CHANGE)"
          : ""
      }`,
    );
    lines.push(...originLines(c.origins));
  }
  return lines.map(showControls).join("\n") + "\n";
}

/**
 * Arguments for a new record: every string of `generated` that was seen
 * before (in the seed, in an answer) made new (` (new)` appended), so a
 * creating tool adds instead of finding what seeding by use made; null
 * when nothing was seen or the schema refuses the result.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const pool = new ValuePool();
 * pool.add({ name: "Alice" }, "the seed");
 * const f = freshArguments({ entities: [{ name: "Alice", entityType: "person" }] }, pool, undefined);
 * assert.deepEqual(f!.arguments, { entities: [{ name: "Alice (new)", entityType: "person" }] });
 * ```
 */
export function freshArguments(
  generated: Record<string, unknown>,
  pool: ValuePool,
  inputSchema: unknown,
): { arguments: Record<string, unknown>; origins: ArgumentOrigin[] } | null {
  const origins: ArgumentOrigin[] = [];
  let changed = false;
  const make = (v: unknown, path: string, name: string): unknown => {
    if (Array.isArray(v)) {
      return v.map((x, i) => make(x, `${path}[${i}]`, singular(name)));
    }
    if (isPlainObject(v)) {
      return Object.fromEntries(
        Object.entries(v).map((
          [k, x],
        ) => [k, make(x, path === "" ? k : `${path}.${k}`, k)]),
      );
    }
    if (typeof v === "string" && pool.seen(name, v)) {
      changed = true;
      const value = `${v} (new)`;
      origins.push({
        path,
        value,
        from: "generated, made new (seen in the seed)",
      });
      return value;
    }
    if (v !== undefined) origins.push({ path, value: v, from: "generated" });
    return v;
  };
  const out = make(generated, "", "") as Record<string, unknown>;
  const schema = inputSchema === undefined ? { type: "object" } : inputSchema;
  return changed && validateSchema(schema, out).status === "valid"
    ? { arguments: out, origins }
    : null;
}

/**
 * Generated arguments with every `{identifier}` in a string made literal
 * (`{name}` → `(name)`): a learned target's arguments may hold only the
 * placeholders verity puts there (`{state}`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(literalArguments({ q: "{deno} x", n: [1] }), { q: "(deno) x", n: [1] });
 * ```
 */
export function literalArguments(
  v: Record<string, unknown>,
): Record<string, unknown> {
  const make = (x: unknown): unknown =>
    typeof x === "string"
      ? x.replace(/\{([A-Za-z_]\w*)\}/g, "($1)")
      : Array.isArray(x)
      ? x.map(make)
      : isPlainObject(x)
      ? Object.fromEntries(Object.entries(x).map(([k, y]) => [k, make(y)]))
      : x;
  return make(v) as Record<string, unknown>;
}

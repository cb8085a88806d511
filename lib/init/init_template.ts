/**
 * The starting `target.toml` that `verity init` writes: everything verity
 * could learn from the server (its command, its tools, their declared hints
 * and input schemas) filled in, and a `TODO(verity)` value for everything
 * only a person can decide: tool arguments, where state lives, adapters,
 * seeds and classification. The definition loader refuses any value that
 * still starts with `TODO(verity)`. Pure.
 *
 * @module
 */
import { TODO } from "../definition/types.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import { showControls } from "../common/show_controls.ts";

/** One listed tool, as init saw it. */
export interface ListedTool {
  name: string;
  description: string | null;
  /** Declared hints: TRUE, FALSE, ABSENT or MALFORMED. */
  hints: Record<string, string>;
  inputSchema: unknown;
}

/** Everything the template needs. */
export interface TemplateInput {
  name: string;
  command: string[];
  env: Record<string, string>;
  read: string[];
  /**
   * Read allowances `init` detected (interpreter, virtualenv, node_modules
   * in a directory the sandbox hides), written as `allow.read` with why.
   * @default {[]}
   */
  allowRead?: { path: string; why: string }[];
  source:
    | { package: string; version: string; integrity: string }
    | null;
  tools: ListedTool[];
  /** Comment lines: where this came from and what init changed. */
  notes: string[];
  /** e.g. "verity 0.1.0 on 2026-11-30". */
  generatedBy: string;
  /** The original server command, for the header. */
  origin: string;
  /**
   * `init --url`: the server speaks Streamable HTTP; the local URL (with
   * `{port}`) the definition will start it on.
   * @default {unset: stdio}
   */
  httpUrl?: string;
}

/**
 * A TOML basic string. JSON string escapes are valid TOML; DEL and the C1
 * controls (which TOML would take raw, and a terminal showing the file
 * would obey) are escaped too, and a lone surrogate (no TOML escape can
 * carry it) becomes U+FFFD.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(tomlString('a\n"b"\u009b'), '"a\\n\\"b\\"\\u009b"');
 * ```
 */
export function tomlString(s: string): string {
  return JSON.stringify(s.toWellFormed()).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u00${c.charCodeAt(0).toString(16)}`,
  );
}

/** A TOML key: bare when possible, else quoted. */
export function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

function tomlArray(xs: readonly string[]): string {
  return `[${xs.map(tomlString).join(", ")}]`;
}

/** A short human description of a JSON Schema, two levels deep. */
export function schemaSummary(schema: unknown, depth = 0): string {
  if (!isPlainObject(schema)) return "any";
  if (Array.isArray(schema.enum)) {
    return `one of ${schema.enum.map((e) => JSON.stringify(e)).join(" | ")}`;
  }
  if (schema.const !== undefined) {
    return `exactly ${JSON.stringify(schema.const)}`;
  }
  for (const k of ["anyOf", "oneOf"] as const) {
    const alts = schema[k];
    if (Array.isArray(alts)) {
      return alts.map((a) => schemaSummary(a, depth + 1)).join(" or ");
    }
  }
  const type = Array.isArray(schema.type)
    ? schema.type.join("|")
    : typeof schema.type === "string"
    ? schema.type
    : isPlainObject(schema.properties)
    ? "object"
    : "any";
  if (type === "array") {
    return `array of ${
      depth > 3 ? "…" : schemaSummary(schema.items, depth + 1)
    }`;
  }
  if (type === "object" && isPlainObject(schema.properties)) {
    if (depth > 2) return "object";
    const req = Array.isArray(schema.required) ? schema.required : [];
    const props = Object.entries(schema.properties).map(([k, v]) =>
      `${k}${req.includes(k) ? "" : "?"}: ${schemaSummary(v, depth + 1)}`
    );
    return `{${props.join(", ")}}`;
  }
  return type;
}

function commentLines(text: string, width = 76): string[] {
  const words = text.replace(/\s+/g, " ").trim().split(" ");
  const out: string[] = [];
  let line = "";
  for (const w of words) {
    if (line !== "" && line.length + 1 + w.length > width) {
      out.push(`# ${line}`);
      line = w;
    } else line = line === "" ? w : `${line} ${w}`;
  }
  if (line !== "") out.push(`# ${line}`);
  return out;
}

const READ_VERBS =
  /^(get|list|read|search|show|describe|fetch|find|query|count|status|view|lookup)/i;

/**
 * Whether a listed tool looks like a read: it declares readOnlyHint true,
 * or its name starts with a read verb (`get_`, `list_`, `read_`, ...).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.equal(looksLikeRead({ name: "get_count", description: null, hints: {}, inputSchema: {} }), true);
 * assert.equal(looksLikeRead({ name: "increment", description: null, hints: {}, inputSchema: {} }), false);
 * ```
 */
export function looksLikeRead(t: ListedTool): boolean {
  if (t.hints.readOnlyHint === "TRUE") return true;
  const verb = READ_VERBS.exec(t.name)?.[0];
  // The verb is a word of its own: get_x, get-x, getX, get (not getaway).
  const next = verb === undefined ? undefined : t.name[verb.length];
  return verb !== undefined &&
    (next === undefined || /[-_.A-Z0-9]/.test(next));
}

/**
 * A commented-out `probe` line for a tool that does not look like a read,
 * naming up to three listed tools that do (to decide by hand), or nothing.
 */
function probeSuggestion(t: ListedTool, all: readonly ListedTool[]): string[] {
  if (looksLikeRead(t)) return [];
  const reads = all.filter((x) => x.name !== t.name && looksLikeRead(x));
  if (reads.length === 0) return [];
  const names = reads.slice(0, 3).map((x) => x.name);
  return [
    ...commentLines(
      `If this tool keeps state that no location shows (process memory), name a read that shows it; verity calls it before and after the tool (docs/definitions.md, Probes). Reads listed: ${
        names.join(", ")
      }${reads.length > 3 ? ", ..." : ""}.`,
    ),
    `# probe = { name = ${tomlString(names[0]!)}, arguments = {} }`,
  ];
}

function toolBlock(t: ListedTool, all: readonly ListedTool[] = []): string[] {
  const out: string[] = [];
  out.push(`# ---- ${t.name} ${"-".repeat(Math.max(3, 70 - t.name.length))}`);
  out.push(
    `# declared: ${
      Object.entries(t.hints).map(([h, s]) => `${h}=${s}`).join(" ")
    }`,
  );
  if (t.description) {
    out.push(...commentLines(t.description.split("\n")[0]!.slice(0, 300)));
  }
  const schema = isPlainObject(t.inputSchema) ? t.inputSchema : {};
  const props = isPlainObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === "string")
    : [];
  const optional = Object.keys(props).filter((k) => !required.includes(k));
  if (optional.length) {
    out.push(
      `# optional: ${
        optional.map((k) => `${k}: ${schemaSummary(props[k], 1)}`).join("; ")
      }`,
    );
  }
  out.push("[[tools]]");
  out.push(`name = ${tomlString(t.name)}`);
  if (required.length === 0) {
    out.push("arguments = {}");
  } else {
    out.push(
      `arguments = { ${
        required.map((k) =>
          `${tomlKey(k)} = ${
            tomlString(`${TODO}: ${schemaSummary(props[k], 1)}`)
          }`
        ).join(", ")
      } }`,
    );
  }
  out.push(...probeSuggestion(t, all));
  return out;
}

/**
 * Render the starting `target.toml`.
 *
 * @example
 * ```ts
 * const text = renderTargetTemplate({
 *   name: "notes", command: ["{deno}", "run", "/srv/notes/server.ts"], env: {}, read: [],
 *   source: null, notes: [], generatedBy: "verity 0.1.0", origin: "deno run /srv/notes/server.ts",
 *   tools: [{ name: "add", description: null, hints: {}, inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }],
 * });
 * text.includes('arguments = { text = "TODO(verity): string" }'); // true
 * ```
 */
export function renderTargetTemplate(input: TemplateInput): string {
  const L: string[] = [
    `# Audit target written by ${input.generatedBy} from:`,
    `#   ${input.origin}`,
    `# Replace every ${TODO} value: verity refuses to load this file until none`,
    "# is left. Targets never carry expected verdicts.",
  ];
  for (const n of input.notes) L.push(...commentLines(`init: ${n}`));
  L.push("", "[target]", `name = ${tomlString(input.name)}`, `command = [`);
  for (const c of input.command) L.push(`  ${tomlString(c)},`);
  L.push(`]`);
  if (input.httpUrl !== undefined) {
    L.push(
      "# Streamable HTTP: verity picks a free loopback port for {port}, starts",
      "# the command sandboxed (network: listening on that port only) and",
      "# waits until it answers there.",
      `transport = "http"`,
      `url = ${tomlString(input.httpUrl)}`,
    );
  }
  if (input.read.length) {
    L.push(
      "# Extra paths the server may read (its own code).",
      `read = ${tomlArray(input.read)}`,
    );
  }
  const allowRead = input.allowRead ?? [];
  if (allowRead.length) {
    L.push(
      "# Sandbox allowances init detected: bubblewrap hides /tmp, /run and your",
      "# home, so these must stay readable for the server to start.",
      ...allowRead.map((a) => `#   ${a.path}: ${a.why}`),
      `allow = { read = ${tomlArray(allowRead.map((a) => a.path))} }`,
    );
  }
  const envKeys = Object.keys(input.env).sort();
  if (envKeys.length) {
    L.push("[target.env]");
    for (const k of envKeys) {
      L.push(`${tomlKey(k)} = ${tomlString(input.env[k]!)}`);
    }
  }
  if (input.source) {
    L.push(
      "",
      "# Pinned by verity init from the npm registry; `verity prepare` checks",
      "# every copy against this integrity and runs nothing else.",
      "[source]",
      `package = ${tomlString(input.source.package)}`,
      `version = ${tomlString(input.source.version)}`,
      `integrity = ${tomlString(input.source.integrity)}`,
    );
  }
  L.push(
    "",
    "[state]",
    '# Every place this server keeps state, as "<kind>:<path in the state directory>":',
    '# "sqlite:state.db", "json:store.json", "fs:files". Decide; two options',
    "# need care:",
    '#   locations = []                  no state at all. Coverage is then "none":',
    "#                                   nothing can be seen to hold, so no claim",
    "#                                   PASSes and nothing is over-declared.",
    '#   locations = ["memory:process"]  state kept in the server\'s memory (a toggle,',
    "#                                   a counter, a history): verdicts that need it",
    "#                                   are INCONCLUSIVE:UNOBSERVED_STATE, never PASS.",
    "# Either way, identical calls that answer differently mark the behaviour",
    '# "unknown: state may live in process memory".',
    "# The server finds the state directory in {state} (command, env) and in",
    "# VERITY_STATE_DIR; HOME points there too.",
    `locations = [${
      tomlString(`${TODO}: where does this server keep its state?`)
    }]`,
    "",
    '# One adapter per location. kind: sqlite | fs | json (format = "jsonl" for',
    "# JSON Lines; region_by and key to identify records). label: the path in",
    "# the state directory. seed: a .sql script, a directory or a JSON file beside",
    "# this file. business / append_only: regions (tables, paths, json regions)",
    "# whose changes count; unclassified changes can neither PASS nor fail.",
    "[[adapters]]",
    `kind = ${tomlString(`${TODO}: sqlite, fs or json`)}`,
    `label = ${tomlString(`${TODO}: path inside the state directory`)}`,
    `seed = ${
      tomlString(`${TODO}: seed file or directory beside target.toml`)
    }`,
    `business = [${tomlString(`${TODO}: regions holding the user's records`)}]`,
    "",
    `# ${input.tools.length} tool(s) listed. For each, arguments that exercise it on`,
    '# the seeded state (add variant = "name" to test more than one set).',
  );
  for (const t of input.tools) {
    L.push("");
    L.push(...toolBlock(t, input.tools));
  }
  // A server's strings (tool names, descriptions, schema keys) land in
  // comment lines: a newline there would start live TOML, so every control
  // character in a comment is written as a visible escape.
  return L.map((l) => l.startsWith("#") ? showControls(l) : l).join("\n") +
    "\n";
}

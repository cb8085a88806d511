/**
 * Manifests: a server's declarations as captured, and the declarations
 * `diff` and `ledger validate` read. Pure.
 *
 * Two input shapes are read:
 * - a verity manifest (`"format": "verity-manifest"`), written by
 *   `verity capture`: every tool as served (`raw`), with its contract hash
 *   and recipe, and `annotations[]` binding each tool's declared MCP
 *   annotations to its contract (under a recipe that covers them);
 * - an mcp-evidence-validator declared manifest: `tools[]` of declared tool
 *   objects (`name`, `description`, `input_schema`, `permissions`, ...), an
 *   optional manifest-level `contract_recipe` that a tool may override, and
 *   `annotations[]` binding statements to contract hashes.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { HINT_NAMES, parseToolPages } from "../contracts/contracts.ts";
import {
  canonicalJson,
  isDigest,
  needsOwnReader,
  parsePythonJson,
} from "./canonical.ts";
import {
  contractHash,
  type Recipe,
  RECIPE_FIELDS,
  recipeAt,
} from "./recipes.ts";
import { isPlainObject } from "../common/is_plain_object.ts";

/** The `format` value of a verity manifest. */
export const MANIFEST_FORMAT = "verity-manifest";
/** The manifest version this code writes and reads. */
export const MANIFEST_VERSION = 1;

/** One tool in a verity manifest. */
export interface ManifestTool {
  name: string;
  contract_recipe: Recipe;
  contract_hash: string;
  /** The tool object exactly as served (numbers as Python reads them). */
  raw: Record<string, unknown>;
}

/** A captured server's declarations. */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof MANIFEST_VERSION;
  /** ISO 8601 UTC time of the capture. */
  captured_at: string;
  /** The command that started the server. */
  command: string[];
  server: {
    name: string | null;
    version: string | null;
    protocol_version: string | null;
  };
  /** `serverInfo` as the server sent it. */
  server_info: unknown;
  contract_recipe: Recipe;
  tools: ManifestTool[];
  /**
   * One binding per tool that declares MCP `annotations`, to the contract
   * they were declared with (mcp-evidence-validator's `annotations[]`).
   * Empty under a recipe that does not cover annotations (1): a hash blind
   * to them cannot say they still hold.
   */
  annotations: ManifestBinding[];
  /** Problems seen in the listing (invalid pages, duplicate keys, unnamed tools). */
  problems: string[];
}

/** A binding as a manifest writes it (mcp-evidence-validator's `annotations[]` entry). */
export interface ManifestBinding {
  /** `<tool>#annotations`. */
  id: string;
  tool: string;
  /** What the tool declared, e.g. `declares annotations {"readOnlyHint":true}`. */
  statement: string;
  /** The tool's contract hash under the manifest's recipe. */
  bound_contract: string;
}

/** Whether a recipe's hash covers a tool's `annotations`. */
function coversAnnotations(recipe: Recipe): boolean {
  return RECIPE_FIELDS[recipe].some((f) => f.field === "annotations");
}

/**
 * The binding of a tool's declared annotations to its contract, or null
 * when it declares none (no `annotations` object, or an empty one) or the
 * recipe does not cover them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const b = annotationBinding({ name: "t", annotations: { readOnlyHint: true } }, "sha256:" + "0".repeat(64), "3");
 * assert.equal(b?.statement, 'declares annotations {"readOnlyHint":true}');
 * assert.equal(annotationBinding({ name: "t" }, "sha256:" + "0".repeat(64), "3"), null);
 * ```
 */
export function annotationBinding(
  raw: Record<string, unknown>,
  contractHash: string,
  recipe: Recipe,
): ManifestBinding | null {
  const a = raw.annotations;
  if (typeof raw.name !== "string" || !coversAnnotations(recipe)) return null;
  if (!isPlainObject(a) || Object.keys(a).length === 0) return null;
  return {
    id: `${raw.name}#annotations`,
    tool: raw.name,
    statement: `declares annotations ${canonicalJson(a)}`,
    bound_contract: contractHash,
  };
}

/** What {@linkcode buildManifest} is made from. */
export interface ManifestInput {
  /** Raw text of each `tools/list` response frame. */
  pageTexts: readonly string[];
  serverInfo: unknown;
  protocolVersion: string | null;
  command: readonly string[];
  /** ISO 8601 capture time (the caller reads the clock). */
  capturedAt: string;
  recipe: Recipe;
}

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/**
 * Build a manifest from the raw `tools/list` pages of a session.
 * Tools are read the way Python's `json` reads them, so `1.0` in a schema
 * hashes as `1.0` (as mcp-evidence-validator hashes it), and listed in the
 * order served.
 */
export function buildManifest(input: ManifestInput): Manifest {
  const listing = parseToolPages(input.pageTexts);
  const problems = [...listing.problems];
  // Each page is read once: by parseToolPages (duplicate keys, hints). Only a
  // page whose numbers Python reads differently from JSON.parse (`1.0`,
  // integers beyond 2^53) is read a second time, losslessly, for hashing;
  // for every other page the two readings are the same value.
  const lossless: unknown[][] = input.pageTexts.map((t) => {
    if (!needsOwnReader(t)) return [];
    try {
      const v = parsePythonJson(t) as { result?: { tools?: unknown } } | null;
      const tools = v?.result?.tools;
      return Array.isArray(tools) ? tools : [];
    } catch {
      return [];
    }
  });
  const tools: ManifestTool[] = [];
  const annotations: ManifestBinding[] = [];
  const seen = new Map<string, string>();
  for (const c of listing.contracts) {
    const where = `page ${c.page} tool ${c.index}`;
    for (const p of c.problems) problems.push(`${where} (${c.name}): ${p}`);
    for (const h of HINT_NAMES) {
      const hint = c.hints[h];
      if (hint.state === "MALFORMED") {
        problems.push(`${where} (${c.name}): ${h}: MALFORMED ${hint.detail}`);
      }
    }
    const candidate = lossless[c.page]?.[c.index];
    const raw = isPlainObject(candidate) ? candidate : c.raw;
    if (typeof raw.name !== "string") continue; // already a problem: name is not a string
    const prev = seen.get(raw.name);
    if (prev !== undefined) {
      problems.push(
        `duplicate tool name ${
          JSON.stringify(raw.name)
        } at ${prev} and ${where}`,
      );
    }
    seen.set(raw.name, where);
    const hash = contractHash(raw, input.recipe);
    tools.push({
      name: raw.name,
      contract_recipe: input.recipe,
      contract_hash: hash,
      raw,
    });
    const binding = annotationBinding(raw, hash, input.recipe);
    // A duplicate name gets no second binding: which contract it binds is ambiguous.
    if (binding !== null && prev === undefined) annotations.push(binding);
  }
  const info = isPlainObject(input.serverInfo) ? input.serverInfo : {};
  return {
    format: MANIFEST_FORMAT,
    version: MANIFEST_VERSION,
    captured_at: input.capturedAt,
    command: [...input.command],
    server: {
      name: str(info.name),
      version: str(info.version),
      protocol_version: input.protocolVersion,
    },
    server_info: input.serverInfo ?? null,
    contract_recipe: input.recipe,
    tools,
    annotations,
    problems,
  };
}

/** A statement bound to a contract hash (mcp-evidence-validator `annotations[]`). */
export interface Binding {
  id: string | null;
  tool: string;
  statement: string | null;
  bound_contract: string;
}

/** One declared tool, ready to compare. */
export interface DeclaredTool {
  name: string;
  recipe: Recipe;
  /** Contract hash under `recipe`, recomputed from the declaration. */
  hash: string;
  /** The object the hash is computed over (raw tool or declared tool). */
  tool: Record<string, unknown>;
  /** Where the tool sits in its file, for messages. */
  keyPath: string;
}

/** A declaration read from either manifest shape. */
export interface Declaration {
  file: string;
  kind: "verity-manifest" | "declared";
  server: string | null;
  version: string | null;
  /** The manifest-level recipe ("1" when the file states none). */
  recipe: Recipe;
  /** Whether the file stated a manifest-level recipe. */
  recipeStated: boolean;
  tools: DeclaredTool[];
  bindings: Binding[];
}

/** Options for {@linkcode readDeclaration}. */
export interface ReadDeclarationOptions {
  /**
   * Re-derive every contract hash under this recipe instead of the one the
   * file states (stored hashes are then not checked).
   * @default {undefined}
   */
  recipe?: Recipe;
}

function readBindings(file: string, v: unknown): Binding[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) {
    throw new DefinitionError(
      file,
      "annotations",
      "must be an array of bindings",
    );
  }
  return v.map((a, i) => {
    const kp = `annotations[${i}]`;
    if (!isPlainObject(a)) {
      throw new DefinitionError(file, kp, "must be an object");
    }
    if (typeof a.tool !== "string") {
      throw new DefinitionError(file, `${kp}.tool`, "must be a string");
    }
    if (!isDigest(a.bound_contract)) {
      throw new DefinitionError(
        file,
        `${kp}.bound_contract`,
        `must be "sha256:" and 64 lowercase hex digits, got ${
          JSON.stringify(a.bound_contract) ?? "nothing"
        }`,
      );
    }
    return {
      id: str(a.id),
      tool: a.tool,
      statement: str(a.statement),
      bound_contract: a.bound_contract,
    };
  });
}

/**
 * The tools of either shape, each hash made again under its recipe (or
 * `opts.recipe`) and checked against the one stored, names unique.
 */
function readTools(
  doc: Record<string, unknown>,
  file: string,
  verity: boolean,
  fileRecipe: Recipe,
  opts: ReadDeclarationOptions,
): DeclaredTool[] {
  const fail = (keyPath: string, message: string): never => {
    throw new DefinitionError(file, keyPath, message);
  };
  if (!Array.isArray(doc.tools)) {
    fail(
      "tools",
      verity ? "must be an array" : "must be an array of tool declarations",
    );
  }
  const seen = new Map<string, string>();
  return (doc.tools as unknown[]).map((t, i) => {
    const kp = `tools[${i}]`;
    if (!isPlainObject(t)) return fail(kp, "must be an object");
    let tool = t;
    if (verity) {
      if (!isPlainObject(t.raw)) {
        return fail(`${kp}.raw`, "must be the tool object as served");
      }
      if (typeof t.raw.name !== "string") {
        fail(`${kp}.raw.name`, "must be a string");
      }
      if (t.name !== t.raw.name) {
        fail(
          `${kp}.name`,
          `${JSON.stringify(t.name)} differs from raw.name ${
            JSON.stringify(t.raw.name)
          }`,
        );
      }
      tool = t.raw;
    } else if (typeof t.name !== "string") {
      fail(`${kp}.name`, "must be a string");
    }
    const name = tool.name as string;
    const own = verity || t.contract_recipe !== undefined
      ? recipeAt(file, `${kp}.contract_recipe`, t.contract_recipe)
      : fileRecipe;
    const recipe = opts.recipe ?? own;
    const hash = contractHash(tool, recipe);
    if (
      opts.recipe === undefined && (verity || t.contract_hash !== undefined) &&
      t.contract_hash !== hash
    ) {
      fail(
        `${kp}.contract_hash`,
        `${JSON.stringify(t.contract_hash)} is not the recipe ${own} hash of ${
          verity
            ? `raw (${hash}): the manifest was edited`
            : `this declaration (${hash})`
        }`,
      );
    }
    const prev = seen.get(name);
    if (prev !== undefined) {
      fail(kp, `duplicate tool name ${JSON.stringify(name)} (also at ${prev})`);
    }
    seen.set(name, kp);
    return { name, recipe, hash, tool, keyPath: kp };
  });
}

/**
 * Read a declaration (verity manifest or mcp-evidence-validator declared
 * manifest) from a parsed document. Throws {@linkcode DefinitionError}
 * naming the file and key path for anything it cannot use: an unknown
 * recipe, a tool without a name, a duplicate tool name, a stored contract
 * hash that does not match its declaration.
 */
export function readDeclaration(
  doc: unknown,
  file: string,
  options: ReadDeclarationOptions = {},
): Declaration {
  if (!isPlainObject(doc)) {
    throw new DefinitionError(file, "", "must be a JSON object (a manifest)");
  }
  const verity = doc.format !== undefined;
  if (verity && doc.format !== MANIFEST_FORMAT) {
    throw new DefinitionError(
      file,
      "format",
      `unknown format ${
        JSON.stringify(doc.format)
      } (expected "${MANIFEST_FORMAT}")`,
    );
  }
  if (verity && doc.version !== MANIFEST_VERSION) {
    throw new DefinitionError(
      file,
      "version",
      `unsupported manifest version ${
        JSON.stringify(doc.version)
      } (this verity reads 1)`,
    );
  }
  const stated = verity || doc.contract_recipe !== undefined;
  const recipe = stated
    ? recipeAt(file, "contract_recipe", doc.contract_recipe)
    : "1";
  const tools = readTools(doc, file, verity, recipe, options);
  const server = isPlainObject(doc.server) ? doc.server : {};
  return {
    file,
    kind: verity ? "verity-manifest" : "declared",
    server: !verity && typeof doc.server === "string"
      ? doc.server
      : str(server.name),
    version: str(server.version),
    recipe: options.recipe ?? recipe,
    recipeStated: stated,
    tools,
    bindings: readBindings(file, doc.annotations),
  };
}

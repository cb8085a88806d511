/**
 * Declared-vs-observed checks over observed tool-call records. Pure.
 *
 * | check | severity | when |
 * |---|---|---|
 * | `unknown_tool` | high | an observed tool the declaration does not carry |
 * | `scope_violation` | high | argument names outside the declared input schema's `properties`; or observed privilege use (verity's observed records) outside what the declared permissions, else the hints, permit |
 * | `recipe_mismatch` | high | the observed hash was made under another recipe (an observation with a hash and no recipe is read as recipe 1): comparison refused |
 * | `contract_mutated` | medium | same recipe, the observed contract hash differs from the declared one |
 * | `unbound_annotation` | low | the contract is unchanged but no annotation binds it |
 *
 * The healthy baseline, `bound_unmutated` (an annotation binds the contract
 * observed, unchanged), is no finding: the summary counts it.
 *
 * An observation without a `contract_hash` states no recipe and gets no
 * contract verdict; its arguments are still judged.
 *
 * @module
 */
import { DefinitionError } from "../errors.ts";
import { isDigest } from "./canonical.ts";
import type { Declaration, DeclaredTool } from "./manifest.ts";
import { type Recipe, recipeAt } from "./recipes.ts";
import { isPlainObject } from "../common/is_plain_object.ts";
import {
  type ObservedPrivilege,
  outsideScope,
  privilegeScope,
  readPrivilege,
} from "./privilege_scope.ts";

/** The checks, in report order. */
export const CHECKS = [
  "bound_unmutated",
  "contract_mutated",
  "scope_violation",
  "unknown_tool",
  "recipe_mismatch",
  "unbound_annotation",
] as const;

/** A check that can produce a finding. */
export type CheckName = Exclude<typeof CHECKS[number], "bound_unmutated">;

/** How much a finding matters. */
export type Severity = "high" | "medium" | "low";

/** Severity of each check. */
export const SEVERITY: Readonly<Record<CheckName, Severity>> = {
  unknown_tool: "high",
  scope_violation: "high",
  recipe_mismatch: "high",
  contract_mutated: "medium",
  unbound_annotation: "low",
};

/** One observed tool call. */
export interface Observation {
  /** The observation's `index` (or its 1-based position when it states none). */
  index: number;
  tool: string;
  /** Argument values by name; null when the record holds none. */
  args: Record<string, unknown> | null;
  contract_hash: string | null;
  /** The recipe its hash was made under; null when it carries no hash. */
  recipe: Recipe | null;
  /** Where the recipe came from. */
  recipeSource: "observation" | "file" | "legacy_default" | null;
  keyPath: string;
  /** The privilege use the sandbox saw during the call (verity's observed records); null when not recorded. */
  privilege: ObservedPrivilege | null;
}

/** A batch of observations read from a file. */
export interface ObservationBatch {
  file: string;
  server: string | null;
  /** File-level `contract_recipe`, when stated. */
  recipe: Recipe | null;
  observations: Observation[];
}

/** A measured gap between declaration and observation, with its evidence. */
export interface Finding {
  observation_index: number;
  tool: string;
  check: CheckName;
  severity: Severity;
  detail: string;
  declared_contract?: string;
  observed_contract?: string;
  declared_recipe?: Recipe;
  observed_recipe?: Recipe;
  contract_recipe?: Recipe;
  arguments?: string[];
  bindings?: string[];
  /** Observed accesses outside the declared privilege scope, one line each. */
  privileges?: string[];
  /** Where that scope came from: the tool's declared `permissions` or its hints. */
  scope_source?: "permissions" | "hints";
}

/** Counts over one validation. */
export interface ValidationSummary {
  declared_tools: number;
  observations: number;
  findings: number;
  by_severity: Record<Severity, number>;
  by_check: Partial<Record<CheckName, number>>;
  /**
   * Observations whose contract is the declared one and bound by an
   * annotation: the healthy baseline, no finding.
   */
  bound_unmutated: number;
  /** Every recipe in play: the declaration's and every observation's. */
  contract_recipes: Recipe[];
  checks: string[];
}

/** A validation's outcome. */
export interface ValidationReport {
  summary: ValidationSummary;
  findings: Finding[];
}

/**
 * Each argument's JSON type (`string`, `integer`, `number`, `boolean`,
 * `null`, `array`, `object`): an observed record's `argument_shape`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(argumentShape({ a: 1, b: 1.5, c: [] }), { a: "integer", b: "number", c: "array" });
 * ```
 */
export function argumentShape(
  args: Record<string, unknown>,
): Record<string, string> {
  const type = (v: unknown) =>
    v === null
      ? "null"
      : Array.isArray(v)
      ? "array"
      : typeof v === "number"
      ? Number.isInteger(v) ? "integer" : "number"
      : typeof v;
  return Object.fromEntries(
    Object.entries(args).map(([n, v]) => [n, type(v)]),
  );
}

/**
 * Read observed records (`{"observations": [{tool, args, contract_hash,
 * contract_recipe, index}]}`, mcp-evidence-validator's shape) from a parsed
 * document. An unknown recipe is refused wherever it appears, even on an
 * observation of an undeclared tool. Throws {@linkcode DefinitionError}.
 */
export function readObservations(doc: unknown, file: string): ObservationBatch {
  if (!isPlainObject(doc)) {
    throw new DefinitionError(
      file,
      "",
      "must be a JSON object with an observations array",
    );
  }
  if (!Array.isArray(doc.observations)) {
    throw new DefinitionError(file, "observations", "must be an array");
  }
  const fileRecipe = doc.contract_recipe === undefined
    ? null
    : recipeAt(file, "contract_recipe", doc.contract_recipe);
  const observations = doc.observations.map((o, i): Observation => {
    const kp = `observations[${i}]`;
    if (!isPlainObject(o)) {
      throw new DefinitionError(file, kp, "must be an object");
    }
    if (typeof o.tool !== "string") {
      throw new DefinitionError(file, `${kp}.tool`, "must be a string");
    }
    let args: Record<string, unknown> | null = null;
    if (o.args !== undefined && o.args !== null) {
      if (!isPlainObject(o.args)) {
        throw new DefinitionError(
          file,
          `${kp}.args`,
          "must be an object of argument values",
        );
      }
      args = o.args;
    }
    let hash: string | null = null;
    if (o.contract_hash !== undefined && o.contract_hash !== null) {
      if (!isDigest(o.contract_hash)) {
        throw new DefinitionError(
          file,
          `${kp}.contract_hash`,
          `must be "sha256:" and 64 lowercase hex digits, got ${
            JSON.stringify(o.contract_hash)
          }`,
        );
      }
      hash = o.contract_hash;
    }
    const own = o.contract_recipe === undefined || o.contract_recipe === null
      ? null
      : recipeAt(file, `${kp}.contract_recipe`, o.contract_recipe);
    let recipe: Recipe | null = null;
    let recipeSource: Observation["recipeSource"] = null;
    if (own !== null) {
      recipe = own;
      recipeSource = "observation";
    } else if (hash !== null) {
      recipe = fileRecipe ?? "1";
      recipeSource = fileRecipe !== null ? "file" : "legacy_default";
    }
    let index = i + 1;
    if (o.index !== undefined) {
      if (typeof o.index !== "number" || !Number.isInteger(o.index)) {
        throw new DefinitionError(
          file,
          `${kp}.index`,
          `must be an integer, got ${JSON.stringify(o.index)}`,
        );
      }
      index = o.index;
    }
    return {
      index,
      tool: o.tool,
      args,
      contract_hash: hash,
      recipe,
      recipeSource,
      keyPath: kp,
      privilege: readPrivilege(o.privilege, file, `${kp}.privilege`),
    };
  });
  return {
    file,
    server: typeof doc.server === "string" ? doc.server : null,
    recipe: fileRecipe,
    observations,
  };
}

function declaredArguments(tool: DeclaredTool): Set<string> {
  const schema = tool.tool.inputSchema ?? tool.tool.input_schema;
  if (!isPlainObject(schema)) return new Set();
  const props = schema.properties;
  return new Set(isPlainObject(props) ? Object.keys(props) : []);
}

/**
 * Judge every observation against the declaration.
 *
 * @example
 * ```ts ignore
 * const { findings, summary } = validateObservations(
 *   readDeclaration(declaredDoc, "declared.json"),
 *   readObservations(observedDoc, "observed.json"),
 * );
 * ```
 */
export function validateObservations(
  declared: Declaration,
  observed: ObservationBatch,
): ValidationReport {
  const tools = new Map(declared.tools.map((t) => [t.name, t]));
  const findings: Finding[] = [];
  let boundUnmutated = 0;
  const recipes = new Set<Recipe>();
  if (declared.tools.length === 0) recipes.add(declared.recipe);
  for (const t of declared.tools) recipes.add(t.recipe);
  for (const obs of observed.observations) {
    if (obs.recipe !== null) recipes.add(obs.recipe);
    const at = { observation_index: obs.index, tool: obs.tool };
    const decl = tools.get(obs.tool);
    if (!decl) {
      findings.push({
        ...at,
        check: "unknown_tool",
        severity: SEVERITY.unknown_tool,
        detail: `tool ${
          JSON.stringify(obs.tool)
        } was observed but is not declared`,
      });
      continue;
    }
    if (obs.contract_hash !== null && obs.recipe !== null) {
      const bound = declared.bindings.filter((b) => b.tool === obs.tool);
      if (obs.recipe !== decl.recipe) {
        const why = obs.recipeSource === "legacy_default"
          ? `the observation states no recipe, so its hash is read as recipe 1 (made before recipes existed)`
          : `the observation's hash was made under recipe ${obs.recipe}`;
        const fix = obs.recipeSource === "legacy_default"
          ? `; to judge it under the recipe that produced it, set "contract_recipe": "1" on the declaration`
          : "";
        findings.push({
          ...at,
          check: "recipe_mismatch",
          severity: SEVERITY.recipe_mismatch,
          detail:
            `${why}, the declaration is recipe ${decl.recipe}: two hashes made different ways are not evidence of change, comparison refused${fix}`,
          declared_recipe: decl.recipe,
          observed_recipe: obs.recipe,
          declared_contract: decl.hash,
          observed_contract: obs.contract_hash,
        });
      } else if (obs.contract_hash !== decl.hash) {
        const stale = bound.filter((b) =>
          b.bound_contract !== obs.contract_hash
        ).map((b) => b.id ?? b.bound_contract);
        findings.push({
          ...at,
          check: "contract_mutated",
          severity: SEVERITY.contract_mutated,
          detail:
            `the contract observed at call time differs from the declared one (recipe ${decl.recipe})` +
            (bound.length > 0
              ? `: annotation(s) bound at declaration are stale`
              : ""),
          declared_contract: decl.hash,
          observed_contract: obs.contract_hash,
          contract_recipe: decl.recipe,
          ...(stale.length > 0 ? { bindings: stale } : {}),
        });
      } else if (bound.some((b) => b.bound_contract === decl.hash)) {
        boundUnmutated++;
      } else {
        findings.push({
          ...at,
          check: "unbound_annotation",
          severity: SEVERITY.unbound_annotation,
          detail: `tool ${
            JSON.stringify(obs.tool)
          } was observed with no annotation bound to its current contract`,
          declared_contract: decl.hash,
          contract_recipe: decl.recipe,
        });
      }
    }
    if (obs.args !== null) {
      const allowed = declaredArguments(decl);
      const extra = Object.keys(obs.args).filter((k) => !allowed.has(k)).sort();
      if (extra.length > 0) {
        findings.push({
          ...at,
          check: "scope_violation",
          severity: SEVERITY.scope_violation,
          detail: `argument(s) outside the declared input schema: ${
            extra.map((e) => JSON.stringify(e)).join(", ")
          }`,
          arguments: extra,
        });
      }
    }
    if (obs.privilege !== null) {
      const scope = privilegeScope(decl.tool);
      const outside = outsideScope(scope, obs.privilege);
      if (outside.length > 0 && scope.source !== "none") {
        findings.push({
          ...at,
          check: "scope_violation",
          severity: SEVERITY.scope_violation,
          detail: `privilege use outside the declared scope (${
            scope.source === "permissions"
              ? "declared permissions"
              : "hints: readOnlyHint true permits no write, openWorldHint false no network"
          }): ${outside.join(", ")}`,
          privileges: outside,
          scope_source: scope.source,
        });
      }
    }
  }
  const by_severity: Record<Severity, number> = { high: 0, medium: 0, low: 0 };
  const by_check: Partial<Record<CheckName, number>> = {};
  for (const f of findings) {
    by_severity[f.severity]++;
    by_check[f.check] = (by_check[f.check] ?? 0) + 1;
  }
  return {
    summary: {
      declared_tools: declared.tools.length,
      observations: observed.observations.length,
      findings: findings.length,
      by_severity,
      by_check,
      bound_unmutated: boundUnmutated,
      contract_recipes: [...recipes].sort(),
      checks: [...CHECKS],
    },
    findings,
  };
}

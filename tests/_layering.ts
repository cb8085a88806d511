/**
 * The import-graph checks behind tests/layering_test.ts: a module graph
 * read from `deno info --json`, import cycles (strongly connected
 * components) and pure modules that reach an effectful one. The checks are
 * pure functions of the graph and the sources, so they can be proved on a
 * synthetic graph.
 *
 * @module
 */

/** One module: its local imports (paths relative to the repository) and its external ones. */
export interface GraphModule {
  /** Imports that run code (`import {x}`, `import "…"`). */
  code: string[];
  /** Type-only imports (`import type`), which run nothing. */
  types: string[];
}

/** Modules by repository-relative path (`lib/report/html.ts`) or external specifier (`npm:ajv@…`, `node:fs`). */
export type ModuleGraph = Map<string, GraphModule>;

interface DenoInfoDependency {
  code?: { specifier?: string };
  type?: { specifier?: string };
}
interface DenoInfoModule {
  specifier: string;
  dependencies?: DenoInfoDependency[];
}

/** A repository-relative path for a `file://` specifier under `root`, else the specifier itself. */
function nodeName(
  specifier: string,
  root: string,
  npm: Map<string, string>,
): string {
  const base = root.endsWith("/") ? root : root + "/";
  if (specifier.startsWith(base)) return specifier.slice(base.length);
  return npm.get(specifier) ?? specifier;
}

/**
 * Merge the module lists of one or more `deno info --json` outputs into a
 * graph. `root` is the repository's `file://` URL.
 */
export function graphFromDenoInfo(
  infos: readonly unknown[],
  root: string,
): ModuleGraph {
  const graph: ModuleGraph = new Map();
  for (const info of infos) {
    const o = info as {
      modules?: DenoInfoModule[];
      redirects?: Record<string, string>;
    };
    // npm specifiers resolve through redirects to `npm:/pkg@v/...`; name them by package.
    const npm = new Map<string, string>();
    for (const [from, to] of Object.entries(o.redirects ?? {})) {
      if (from.startsWith("npm:")) npm.set(to, from);
    }
    for (const m of o.modules ?? []) {
      const name = nodeName(m.specifier, root, npm);
      const entry = graph.get(name) ?? { code: [], types: [] };
      for (const d of m.dependencies ?? []) {
        const code = d.code?.specifier;
        const type = d.type?.specifier;
        if (code !== undefined) {
          const n = nodeName(code, root, npm);
          if (!entry.code.includes(n)) entry.code.push(n);
        } else if (type !== undefined) {
          const n = nodeName(type, root, npm);
          if (!entry.types.includes(n)) entry.types.push(n);
        }
      }
      graph.set(name, entry);
    }
  }
  return graph;
}

/** Options of {@linkcode findCycles}. */
export interface CycleOptions {
  /** Count type-only imports as edges too. @default true */
  types?: boolean;
  /** Only modules for which this holds take part. @default every module */
  include?: (name: string) => boolean;
}

/**
 * Every import cycle, one per strongly connected component of more than one
 * module (or a module importing itself), each given as a closed path of
 * imports `a -> b -> … -> a` starting at its alphabetically first module.
 */
export function findCycles(
  graph: ModuleGraph,
  options: CycleOptions = {},
): string[][] {
  const include = options.include ?? (() => true);
  const withTypes = options.types ?? true;
  const edges = (n: string): string[] => {
    const m = graph.get(n);
    if (m === undefined) return [];
    return [...m.code, ...(withTypes ? m.types : [])].filter(include).sort();
  };
  const nodes = [...graph.keys()].filter(include).sort();
  // Tarjan's algorithm, iterative.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let next = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const out = edges(top.node);
      if (top.i < out.length) {
        const w = out[top.i++]!;
        if (!index.has(w)) {
          index.set(w, next);
          low.set(w, next++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.node);
        if (comp.length > 1 || edges(top.node).includes(top.node)) {
          components.push(comp.sort());
        }
      }
    }
  }
  return components.map((comp) => closedPath(comp, edges)).sort((a, b) =>
    a[0]!.localeCompare(b[0]!)
  );
}

/** A shortest cycle through the first module of a strongly connected component. */
function closedPath(comp: string[], edges: (n: string) => string[]): string[] {
  const inComp = new Set(comp);
  const first = comp[0]!;
  const prev = new Map<string, string>();
  const queue = [first];
  while (queue.length > 0) {
    const n = queue.shift()!;
    for (const w of edges(n)) {
      if (!inComp.has(w)) continue;
      if (w === first) {
        const path = [n];
        while (path[0] !== first) path.unshift(prev.get(path[0]!)!);
        return [...path, first];
      }
      if (!prev.has(w)) {
        prev.set(w, n);
        queue.push(w);
      }
    }
  }
  return [first, first];
}

/** Source text with comments blanked out (strings and template text kept). */
export function stripComments(source: string): string {
  let out = "";
  let i = 0;
  let quote: string | null = null;
  while (i < source.length) {
    const c = source[i]!;
    if (quote !== null) {
      out += c;
      if (c === "\\") {
        out += source[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (c === quote) quote = null;
      i++;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      quote = c;
      out += c;
      i++;
    } else if (c === "/" && source[i + 1] === "/") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** What makes a module's own source effectful: the process, disk, network, clock or randomness. */
const EFFECTS: readonly [RegExp, string][] = [
  [/\bDeno\s*\.\s*[A-Za-z_$]/, "Deno.*"],
  [/\bDate\s*\.\s*now\s*\(/, "Date.now()"],
  [/\bnew\s+Date\s*\(\s*\)/, "new Date()"],
  [/\bMath\s*\.\s*random\s*\(/, "Math.random()"],
  [/\bperformance\s*\.\s*now\s*\(/, "performance.now()"],
  [/\bcrypto\s*\.\s*(randomUUID|getRandomValues)\s*\(/, "crypto randomness"],
  [
    /(?<![.\w$])(randomBytes|randomFill|randomFillSync|randomInt|randomUUID)\s*\(/,
    "node:crypto randomness",
  ],
  [/\bprocess\s*\.\s*(env|argv|exit|cwd|stdout|stderr|hrtime)\b/, "process.*"],
];

/**
 * The effects a module's source uses outside comments, each as
 * `Deno.* (line 12)`.
 */
export function effectsInSource(source: string): string[] {
  const lines = stripComments(source).split("\n");
  const found: string[] = [];
  for (const [re, label] of EFFECTS) {
    const at = lines.findIndex((l) => re.test(l));
    if (at !== -1) found.push(`${label} (line ${at + 1})`);
  }
  return found;
}

/** Options of {@linkcode layeringProblems}. */
export interface LayeringOptions {
  /** Whether a module must stay pure. */
  isPure: (name: string) => boolean;
  /** The effects each local module's own source uses ({@linkcode effectsInSource}). */
  effects: Map<string, string[]>;
  /** External modules a pure module may reach (pure libraries such as a JSON Schema validator). */
  pureExternal: (name: string) => boolean;
}

/**
 * Every pure module that uses an effect itself or reaches (through imports
 * that run code) a module that does, or an external module not known to be
 * pure. Each problem names the chain of imports, the first one being the
 * offending import of the pure module.
 */
export function layeringProblems(
  graph: ModuleGraph,
  options: LayeringOptions,
): string[] {
  const problems: string[] = [];
  const isLocal = (n: string) => !/^[a-z]+:/.test(n);
  const bad = (n: string): string | null => {
    if (!isLocal(n)) {
      return options.pureExternal(n)
        ? null
        : "an external module not known to be pure";
    }
    const e = options.effects.get(n) ?? [];
    return e.length > 0 ? `effectful: ${e.join(", ")}` : null;
  };
  for (const name of [...graph.keys()].filter(options.isPure).sort()) {
    const own = bad(name);
    if (own !== null) {
      problems.push(`pure ${name} is itself ${own}`);
      continue;
    }
    // Breadth-first over code imports: the first offender found has the shortest chain.
    const prev = new Map<string, string>([[name, ""]]);
    const queue = [name];
    let found: string | null = null;
    while (queue.length > 0 && found === null) {
      const n = queue.shift()!;
      for (const w of graph.get(n)?.code ?? []) {
        if (prev.has(w)) continue;
        prev.set(w, n);
        if (bad(w) !== null) {
          found = w;
          break;
        }
        if (isLocal(w)) queue.push(w);
      }
    }
    if (found !== null) {
      const chain = [found];
      while (prev.get(chain[0]!) !== "") chain.unshift(prev.get(chain[0]!)!);
      problems.push(
        `pure ${name} imports ${chain[1]} and so reaches ${found} (${
          bad(found)
        }): ${chain.join(" -> ")}`,
      );
    }
  }
  return problems;
}

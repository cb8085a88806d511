/**
 * Generate a string matching a JSON Schema `pattern` (ECMA-262), for the
 * subset a simple generator can handle: literals, escapes, character classes,
 * `.`, groups, alternation, anchors and quantifiers. Backreferences,
 * lookarounds and Unicode property escapes are refused. Every result is
 * checked with the real `RegExp` before it is returned. Pure.
 *
 * @module
 */
import type { Prng } from "./prng.ts";

type Range = readonly [number, number];

type Node =
  | { kind: "char"; code: number }
  | { kind: "set"; ranges: Range[]; negated: boolean }
  | { kind: "any" }
  | { kind: "empty" }
  | { kind: "group"; alternatives: Node[][] }
  | { kind: "repeat"; node: Node; min: number; max: number };

/** Why a pattern could not be used. */
export class UnsupportedPattern extends Error {
  override name = "UnsupportedPattern";
}

const DIGIT: Range[] = [[0x30, 0x39]];
const WORD: Range[] = [[0x61, 0x7a], [0x41, 0x5a], [0x30, 0x39], [0x5f, 0x5f]];
const SPACE: Range[] = [[0x20, 0x20]];
/** Characters offered for negated classes and `.`, most realistic first. */
const PRINTABLE: Range[] = [
  [0x61, 0x7a],
  [0x41, 0x5a],
  [0x30, 0x39],
  [0x20, 0x2f],
  [0x3a, 0x40],
  [0x5b, 0x60],
  [0x7b, 0x7e],
];
/** The class and control escapes (`\d`, `\S`, `\t`, ...) as nodes. */
const ESCAPES: Readonly<Record<string, Node>> = {
  d: { kind: "set", ranges: DIGIT, negated: false },
  D: { kind: "set", ranges: DIGIT, negated: true },
  w: { kind: "set", ranges: WORD, negated: false },
  W: { kind: "set", ranges: WORD, negated: true },
  s: { kind: "set", ranges: SPACE, negated: false },
  S: { kind: "set", ranges: [[0x09, 0x0d], [0x20, 0x20]], negated: true },
  t: { kind: "char", code: 9 },
  n: { kind: "char", code: 10 },
  r: { kind: "char", code: 13 },
  f: { kind: "char", code: 12 },
  v: { kind: "char", code: 11 },
  "0": { kind: "char", code: 0 },
};

/** How far an unbounded quantifier (`*`, `+`, `{n,}`) may stretch. */
const UNBOUNDED = 1_000;

function parse(src: string): Node[][] {
  let i = 0;
  const peek = (): string | undefined => src[i];

  function fail(what: string): never {
    throw new UnsupportedPattern(
      `${what} at offset ${i} of ${JSON.stringify(src)}`,
    );
  }

  function escapeCode(inClass: boolean): Node {
    // at the char after the backslash
    const c = src[i++];
    if (c === undefined) fail("trailing backslash");
    const known = ESCAPES[c];
    if (known !== undefined) return known;
    switch (c) {
      case "b":
        if (inClass) return { kind: "char", code: 8 };
        return { kind: "empty" }; // word boundary: the final RegExp check decides
      case "B":
        return { kind: "empty" };
      case "x": {
        const h = src.slice(i, i + 2);
        if (!/^[0-9a-fA-F]{2}$/.test(h)) fail("bad \\x escape");
        i += 2;
        return { kind: "char", code: parseInt(h, 16) };
      }
      case "u": {
        if (src[i] === "{") {
          const end = src.indexOf("}", i);
          if (end === -1) fail("bad \\u{} escape");
          const code = parseInt(src.slice(i + 1, end), 16);
          i = end + 1;
          return { kind: "char", code };
        }
        const h = src.slice(i, i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) fail("bad \\u escape");
        i += 4;
        return { kind: "char", code: parseInt(h, 16) };
      }
      case "p":
      case "P":
        fail("Unicode property escapes are not supported");
        break;
      case "k":
        fail("named backreferences are not supported");
        break;
      case "c":
        fail("control escapes are not supported");
        break;
    }
    if (/[1-9]/.test(c)) fail("backreferences are not supported");
    return { kind: "char", code: c.codePointAt(0)! };
  }

  function classAtom(): Node {
    const c = src[i];
    if (c === undefined) fail("unterminated character class");
    if (c === "\\") {
      i++;
      return escapeCode(true);
    }
    const code = src.codePointAt(i)!;
    i += code > 0xffff ? 2 : 1;
    return { kind: "char", code };
  }

  function charClass(): Node {
    // after '['
    let negated = false;
    if (peek() === "^") {
      negated = true;
      i++;
    }
    const ranges: Range[] = [];
    const subtract: Range[] = [];
    let first = true;
    while (true) {
      if (i >= src.length) fail("unterminated character class");
      if (src[i] === "]" && !first) {
        i++;
        break;
      }
      if (src[i] === "]" && first) {
        // `[]` matches nothing, `[^]` anything.
        i++;
        if (negated) return { kind: "any" };
        fail("empty character class matches nothing");
      }
      first = false;
      const a = classAtom();
      if (a.kind === "set") {
        if (a.negated) subtract.push(...a.ranges);
        else ranges.push(...a.ranges);
        continue;
      }
      if (a.kind !== "char") fail("unexpected class item");
      if (src[i] === "-" && src[i + 1] !== undefined && src[i + 1] !== "]") {
        i++;
        const b = classAtom();
        if (b.kind !== "char") fail("range to a class escape");
        if (b.code < a.code) fail("range out of order");
        ranges.push([a.code, b.code]);
      } else ranges.push([a.code, a.code]);
    }
    if (subtract.length > 0) {
      // [\D...] style: add every printable char outside the subtracted ranges.
      for (const [lo, hi] of PRINTABLE) {
        for (let c = lo; c <= hi; c++) {
          if (!subtract.some(([a, b]) => c >= a && c <= b)) ranges.push([c, c]);
        }
      }
    }
    return { kind: "set", ranges, negated };
  }

  function quantifier(node: Node): Node {
    const c = peek();
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, UNBOUNDED];
    else if (c === "+") [min, max] = [1, UNBOUNDED];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (!m) return node; // a literal brace
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === "" ? UNBOUNDED : Number(m[3]);
      if (max < min) fail("quantifier range out of order");
      i += m[0].length - 1;
    } else return node;
    i++;
    if (peek() === "?") i++; // lazy: same language
    if (node.kind === "empty") return node;
    return { kind: "repeat", node, min, max };
  }

  function sequence(): Node[] {
    const seq: Node[] = [];
    while (i < src.length) {
      const c = src[i]!;
      if (c === "|" || c === ")") break;
      let node: Node;
      if (c === "^" || c === "$") {
        i++;
        node = { kind: "empty" };
      } else if (c === "(") {
        i++;
        if (src.startsWith("?:", i)) i += 2;
        else if (
          src.startsWith("?<", i) && src[i + 2] !== "=" && src[i + 2] !== "!"
        ) {
          const end = src.indexOf(">", i);
          if (end === -1) fail("bad group name");
          i = end + 1;
        } else if (src[i] === "?") fail("lookarounds are not supported");
        const alternatives = alternation();
        if (src[i] !== ")") fail("unterminated group");
        i++;
        node = { kind: "group", alternatives };
      } else if (c === "[") {
        i++;
        node = charClass();
      } else if (c === ".") {
        i++;
        node = { kind: "any" };
      } else if (c === "\\") {
        i++;
        node = escapeCode(false);
      } else if (c === "*" || c === "+" || c === "?") {
        fail("nothing to repeat");
      } else {
        const code = src.codePointAt(i)!;
        i += code > 0xffff ? 2 : 1;
        node = { kind: "char", code };
      }
      seq.push(quantifier(node));
    }
    return seq;
  }

  function alternation(): Node[][] {
    const alts = [sequence()];
    while (src[i] === "|") {
      i++;
      alts.push(sequence());
    }
    return alts;
  }

  const alts = alternation();
  if (i < src.length) fail("unbalanced parenthesis");
  return alts;
}

function pickFromRanges(ranges: readonly Range[], prng: Prng): number {
  // Prefer realistic ASCII letters and digits when the class offers them.
  const total = ranges.reduce((n, [a, b]) => n + (b - a + 1), 0);
  let k = prng.int(0, total - 1);
  for (const [a, b] of ranges) {
    const size = b - a + 1;
    if (k < size) return a + k;
    k -= size;
  }
  return ranges[0]![0];
}

function inRanges(c: number, ranges: readonly Range[]): boolean {
  return ranges.some(([a, b]) => c >= a && c <= b);
}

function emit(node: Node, prng: Prng, stretch: number, out: string[]): void {
  switch (node.kind) {
    case "char":
      out.push(String.fromCodePoint(node.code));
      return;
    case "empty":
      return;
    case "any":
      out.push(
        String.fromCodePoint(pickFromRanges(PRINTABLE.slice(0, 3), prng)),
      );
      return;
    case "set": {
      if (!node.negated) {
        if (node.ranges.length === 0) {
          throw new UnsupportedPattern("empty character class matches nothing");
        }
        out.push(String.fromCodePoint(pickFromRanges(node.ranges, prng)));
        return;
      }
      const allowed: Range[] = [];
      for (const [lo, hi] of PRINTABLE) {
        for (let c = lo; c <= hi; c++) {
          if (!inRanges(c, node.ranges)) allowed.push([c, c]);
        }
      }
      if (allowed.length === 0) {
        throw new UnsupportedPattern(
          "negated class excludes every printable character",
        );
      }
      out.push(String.fromCodePoint(pickFromRanges(allowed, prng)));
      return;
    }
    case "group": {
      const alt = prng.pick(node.alternatives);
      for (const n of alt) emit(n, prng, stretch, out);
      return;
    }
    case "repeat": {
      const hi = Math.min(node.max, node.min + stretch);
      const count = prng.int(node.min, hi);
      for (let k = 0; k < count; k++) emit(node.node, prng, stretch, out);
      return;
    }
  }
}

/** Length limits a generated string must also satisfy (in code points). */
export interface PatternLimits {
  /** @default {0} */
  minLength?: number;
  /** @default {Infinity} */
  maxLength?: number;
}

/**
 * Generate a string that the pattern matches and that fits the length
 * limits, or throw {@linkcode UnsupportedPattern} saying why not.
 * Reproducible for a given generator state.
 *
 * @example
 * ```ts
 * import { createPrng } from "./prng.ts";
 * const s = generateFromPattern("^[A-Z]{3}-\\d{4}$", createPrng(1));
 * // /^[A-Z]{3}-\d{4}$/.test(s) === true
 * ```
 */
export function generateFromPattern(
  pattern: string,
  prng: Prng,
  limits: PatternLimits = {},
): string {
  const re = compilePattern(pattern);
  const alts = parse(pattern);
  const root: Node = { kind: "group", alternatives: alts };
  const minLength = limits.minLength ?? 0;
  const maxLength = limits.maxLength ?? Infinity;
  // Unanchored patterns match anywhere: when the match itself is too short,
  // padding around it keeps it matching.
  const anchoredStart = pattern.startsWith("^");
  const anchoredEnd = pattern.endsWith("$") && !pattern.endsWith("\\$");
  for (let attempt = 0; attempt < 60; attempt++) {
    const stretch = attempt < 20
      ? 3
      : attempt < 40
      ? 3 + attempt
      : Math.max(minLength, 8) + attempt;
    const out: string[] = [];
    emit(root, prng, stretch, out);
    let s = out.join("");
    let len = [...s].length;
    if (len < minLength && !(anchoredStart && anchoredEnd)) {
      const pad = "x".repeat(minLength - len);
      s = anchoredStart ? s + pad : pad + s;
      len = minLength;
    }
    if (len >= minLength && len <= maxLength && re.test(s)) return s;
  }
  throw new UnsupportedPattern(
    `no string of length ${minLength}..${maxLength} found for pattern ${
      JSON.stringify(pattern)
    }`,
  );
}

/**
 * Compile a JSON Schema pattern as validators do: with the `u` flag when the
 * pattern allows it, else without. Throws `SyntaxError` for an invalid one.
 */
export function compilePattern(pattern: string): RegExp {
  try {
    return new RegExp(pattern, "u");
  } catch {
    return new RegExp(pattern);
  }
}

/**
 * A strict JSON reader that reports duplicate object keys, which
 * `JSON.parse` silently collapses (the last value wins). Pure.
 *
 * @module
 */

/** A duplicate key found while reading, as a JSON pointer to the object and the key. */
export interface DuplicateKey {
  /** JSON pointer of the object holding the duplicate. */
  pointer: string;
  key: string;
  /** How many times the key appeared. */
  count: number;
}

/** The value read (same as `JSON.parse`: last duplicate wins) and the duplicates seen. */
export interface ReadResult {
  value: unknown;
  duplicates: DuplicateKey[];
}

function escapePointer(s: string): string {
  return s.replace(/~/g, "~0").replace(/\//g, "~1");
}

/**
/** Deepest nesting {@linkcode readJson} follows before refusing the text. */
export const MAX_READ_DEPTH = 256;

/** Options of {@linkcode readJson}. */
export interface ReadJsonOptions {
  /**
   * Turns a number token (its exact text, e.g. `1.50` or `12345678901234567891`)
   * into its value. @default Number, as `JSON.parse` does
   */
  number?: (token: string) => unknown;
}

const TOKEN = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/**
 * Read JSON text, reporting every duplicated key by JSON pointer.
 * Throws `SyntaxError` on invalid JSON (with the offset).
 *
 * @example
 * ```ts
 * const r = readJson('{"a":1,"a":2}');
 * // r.value => {a: 2}; r.duplicates => [{pointer: "", key: "a", count: 2}]
 * ```
 */
export function readJson(
  text: string,
  options: ReadJsonOptions = {},
): ReadResult {
  const number = options.number ?? Number;
  let depth = 0;
  const duplicates: DuplicateKey[] = [];
  let i = 0;
  const n = text.length;

  function ws(): void {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  }
  function fail(what: string): never {
    throw new SyntaxError(`${what} at offset ${i}`);
  }
  function str(): string {
    // i at opening quote
    const start = i;
    i++;
    let simple = true;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) {
        simple = false;
        i += 2;
        continue;
      }
      if (c < 0x20) fail("control character in string");
      i++;
    }
    if (i >= n) fail("unterminated string");
    i++;
    const raw = text.slice(start, i);
    return simple ? raw.slice(1, -1) : JSON.parse(raw) as string;
  }
  function value(ptr: string): unknown {
    ws();
    if (i >= n) fail("unexpected end");
    const c = text[i];
    if ((c === "{" || c === "[") && depth >= MAX_READ_DEPTH) {
      fail(`nesting deeper than ${MAX_READ_DEPTH} levels`);
    }
    if (c === "{") {
      depth++;
      i++;
      const obj: Record<string, unknown> = {};
      const counts = new Map<string, number>();
      ws();
      if (text[i] === "}") {
        i++;
        depth--;
        return obj;
      }
      while (true) {
        ws();
        if (text[i] !== '"') fail("expected string key");
        const k = str();
        ws();
        if (text[i] !== ":") fail("expected ':'");
        i++;
        const v = value(`${ptr}/${escapePointer(k)}`);
        counts.set(k, (counts.get(k) ?? 0) + 1);
        Object.defineProperty(obj, k, {
          value: v,
          enumerable: true,
          writable: true,
          configurable: true,
        });
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          break;
        }
        fail("expected ',' or '}'");
      }
      for (const [key, count] of counts) {
        if (count > 1) duplicates.push({ pointer: ptr, key, count });
      }
      depth--;
      return obj;
    }
    if (c === "[") {
      depth++;
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        depth--;
        return arr;
      }
      while (true) {
        arr.push(value(`${ptr}/${arr.length}`));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          break;
        }
        fail("expected ',' or ']'");
      }
      depth--;
      return arr;
    }
    if (c === '"') return str();
    TOKEN.lastIndex = i;
    const m = TOKEN.exec(text);
    if (!m) fail("unexpected token");
    i += m[0].length;
    const t = m[0];
    return t === "true"
      ? true
      : t === "false"
      ? false
      : t === "null"
      ? null
      : number(t);
  }
  const v = value("");
  ws();
  if (i !== n) fail("trailing characters");
  return { value: v, duplicates };
}

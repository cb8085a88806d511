/**
 * The project's own JSON reader: it sees every duplicated object key, which
 * `JSON.parse` silently collapses (the last value wins), keeps `__proto__`
 * as an own key, bounds nesting, and can read numbers another way (as
 * Python does). It never goes through `JSON.parse`'s key handling, which has
 * a defect in Deno 2.9.6 (see `needsOwnReader` in `lib/evidence/canonical.ts`).
 * Pure.
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

/** The value read (as `JSON.parse` gives it: the last duplicate wins) and the duplicates seen. */
export interface ReadResult {
  value: unknown;
  duplicates: DuplicateKey[];
}

/** A duplicated object key, refused by a strict read ({@linkcode ReadJsonOptions.strict}). */
export class DuplicateKeyError extends SyntaxError {
  /** The duplicated key. */
  readonly key: string;
  /** JSON pointer of the object holding it. */
  readonly pointer: string;
  constructor(key: string, pointer: string, offset: number) {
    super(
      `duplicate key ${JSON.stringify(key)} in the object at ${
        pointer || "/"
      } (offset ${offset})`,
    );
    this.name = "DuplicateKeyError";
    this.key = key;
    this.pointer = pointer;
  }
}

/** Deepest nesting {@linkcode readJson} follows by default before refusing the text. */
export const MAX_READ_DEPTH = 256;

/** Options of {@linkcode readJson}. */
export interface ReadJsonOptions {
  /**
   * Turns a number token (its exact text, e.g. `1.50` or `12345678901234567891`)
   * into its value.
   * @default {Number}
   */
  number?: (token: string) => unknown;
  /**
   * Nesting deeper than this is refused with a `SyntaxError`.
   * @default {256}
   */
  maxDepth?: number;
  /**
   * Refuse the first duplicated key with a {@linkcode DuplicateKeyError}
   * instead of listing it.
   * @default {false}
   */
  strict?: boolean;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function escapePointer(s: string): string {
  return s.replaceAll("~", "~0").replaceAll("/", "~1");
}

/** One read: the text, where it is, and the keys and indexes on the way down. */
class JsonRead {
  readonly duplicates: DuplicateKey[] = [];
  #s: string;
  #i = 0;
  #path: (string | number)[] = [];
  #number: (token: string) => unknown;
  #maxDepth: number;
  #strict: boolean;

  constructor(s: string, o: ReadJsonOptions) {
    this.#s = s;
    this.#number = o.number ?? Number;
    this.#maxDepth = o.maxDepth ?? MAX_READ_DEPTH;
    this.#strict = o.strict ?? false;
  }

  #fail(what: string): never {
    throw new SyntaxError(`${what} at offset ${this.#i}`);
  }

  #pointer(): string {
    return this.#path.map((p) => `/${escapePointer(String(p))}`).join("");
  }

  #ws(): void {
    const s = this.#s;
    let i = this.#i;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    }
    this.#i = i;
  }

  /** Past the character `c` (after whitespace), or false when another comes. */
  #take(c: number): boolean {
    this.#ws();
    if (this.#s.charCodeAt(this.#i) !== c) return false;
    this.#i++;
    return true;
  }

  read(): unknown {
    const v = this.#value();
    this.#ws();
    if (this.#i !== this.#s.length) this.#fail("trailing characters");
    return v;
  }

  #string(): string {
    const s = this.#s;
    const start = this.#i;
    let i = start + 1;
    let escaped = false;
    for (;; i++) {
      const c = s.charCodeAt(i);
      if (c === 0x22) break;
      if (Number.isNaN(c)) this.#fail("unterminated string");
      if (c < 0x20) {
        this.#i = i;
        this.#fail("control character in string");
      }
      if (c === 0x5c) {
        escaped = true;
        i++;
      }
    }
    this.#i = i + 1;
    if (!escaped) return s.slice(start + 1, i);
    try {
      return JSON.parse(s.slice(start, i + 1)) as string; // a string alone: no key defect
    } catch {
      this.#i = start;
      return this.#fail("invalid escape in string");
    }
  }

  #value(): unknown {
    this.#ws();
    const s = this.#s;
    const c = s.charCodeAt(this.#i);
    if (c === 0x7b || c === 0x5b) {
      if (this.#path.length >= this.#maxDepth) {
        this.#fail(`nesting deeper than ${this.#maxDepth} levels`);
      }
      this.#i++;
      return c === 0x7b ? this.#object() : this.#array();
    }
    if (c === 0x22) return this.#string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = this.#i;
      const m = NUMBER.exec(s);
      if (m !== null) {
        this.#i += m[0].length;
        return this.#number(m[0]);
      }
    }
    const word = c === 0x74 ? "true" : c === 0x66 ? "false" : "null";
    if (s.startsWith(word, this.#i)) {
      this.#i += word.length;
      return c === 0x74 ? true : c === 0x66 ? false : null;
    }
    return this.#fail(
      Number.isNaN(c) ? "unexpected end" : "unexpected token",
    );
  }

  #object(): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    if (this.#take(0x7d)) return o;
    let counts: Map<string, number> | null = null;
    do {
      this.#ws();
      if (this.#s.charCodeAt(this.#i) !== 0x22) {
        this.#fail("expected string key");
      }
      const at = this.#i;
      const k = this.#string();
      if (Object.hasOwn(o, k)) {
        if (this.#strict) throw new DuplicateKeyError(k, this.#pointer(), at);
        counts ??= new Map();
        counts.set(k, (counts.get(k) ?? 1) + 1);
      }
      if (!this.#take(0x3a)) this.#fail("expected ':'");
      this.#path.push(k);
      // An own property even for "__proto__"; a later duplicate wins.
      Object.defineProperty(o, k, {
        value: this.#value(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.#path.pop();
    } while (this.#take(0x2c));
    if (!this.#take(0x7d)) this.#fail("expected ',' or '}'");
    if (counts !== null) {
      const pointer = this.#pointer();
      for (const [key, count] of counts) {
        this.duplicates.push({ pointer, key, count });
      }
    }
    return o;
  }

  #array(): unknown[] {
    const a: unknown[] = [];
    if (this.#take(0x5d)) return a;
    do {
      this.#path.push(a.length);
      a.push(this.#value());
      this.#path.pop();
    } while (this.#take(0x2c));
    if (!this.#take(0x5d)) this.#fail("expected ',' or ']'");
    return a;
  }
}

/**
 * Read JSON text, reporting every duplicated key by JSON pointer (or, with
 * `strict`, refusing the first). Throws `SyntaxError` on invalid JSON
 * (with the offset) or nesting deeper than `maxDepth`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const r = readJson('{"a":1,"a":2}');
 * assert.deepEqual(r.value, { a: 2 });
 * assert.deepEqual(r.duplicates, [{ pointer: "", key: "a", count: 2 }]);
 * ```
 */
export function readJson(
  text: string,
  options: ReadJsonOptions = {},
): ReadResult {
  const r = new JsonRead(text, options);
  return { value: r.read(), duplicates: r.duplicates };
}

/**
 * Keeping secrets out of evidence: header values given on the command line
 * (`--header`, `--header-env`), a URL's password and query values. Pure.
 *
 * @module
 */

/** The marker that replaces a secret. */
export const REDACTED = "[redacted]";

/** Response and request headers whose values are always secret. */
const ALWAYS_SECRET = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
]);

/**
 * Replaces every known secret value in text. Values shorter than 4
 * characters are not searched for in free text (they would mangle
 * unrelated bytes), but are still dropped from headers by name.
 *
 * @example
 * ```ts
 * import { Redactor } from "./redact.ts";
 * const r = new Redactor(["s3cret-token"], ["authorization"]);
 * console.assert(r.text("Bearer s3cret-token") === "Bearer [redacted]");
 * ```
 */
export class Redactor {
  #values: string[];
  #names: Set<string>;

  constructor(values: readonly string[], headerNames: readonly string[] = []) {
    this.#values = [...new Set(values.filter((v) => v.length >= 4))]
      .sort((a, b) => b.length - a.length);
    this.#names = new Set(headerNames.map((n) => n.toLowerCase()));
  }

  /** Also keep `value` out of everything shown from now on (a token obtained mid-session). */
  add(value: string): void {
    if (value.length < 4 || this.#values.includes(value)) return;
    this.#values.push(value);
    this.#values.sort((a, b) => b.length - a.length);
  }

  /** True when `text` holds a secret. */
  has(text: string): boolean {
    return this.#values.some((v) => text.includes(v));
  }

  /** `text` with every secret replaced by {@linkcode REDACTED}. */
  text(text: string): string {
    let out = text;
    for (const v of this.#values) {
      if (out.includes(v)) out = out.split(v).join(REDACTED);
    }
    return out;
  }

  /** Headers as sorted `[name, value]` pairs, secret values replaced. */
  headers(h: Headers | Record<string, string>): [string, string][] {
    const pairs: [string, string][] = h instanceof Headers
      ? [...h.entries()]
      : Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]);
    return pairs.map(([k, v]): [string, string] => {
      const name = k.toLowerCase();
      return [
        name,
        ALWAYS_SECRET.has(name) || this.#names.has(name)
          ? REDACTED
          : this.text(v),
      ];
    }).sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  }

  /** A URL for evidence: password and query values replaced. */
  url(url: string): string {
    try {
      const u = new URL(url);
      if (u.password) u.password = "redacted";
      if (u.username && this.has(u.username)) u.username = "redacted";
      const q = [...u.searchParams.keys()];
      if (q.length > 0) {
        u.search = q.map((k) => `${encodeURIComponent(k)}=redacted`).join(
          "&",
        );
      }
      return this.text(u.toString());
    } catch {
      return this.text(url);
    }
  }

  /** The secret values of a URL (password, query values), to redact in free text too. */
  static urlSecrets(url: string): string[] {
    try {
      const u = new URL(url);
      const out = [...u.searchParams.values()];
      if (u.password) out.push(u.password, decodeURIComponent(u.password));
      return out;
    } catch {
      return [];
    }
  }
}

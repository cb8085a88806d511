/**
 * Realistic values for JSON Schema string `format`s. Pure.
 *
 * @module
 */
import type { Prng } from "./prng.ts";

const FORMAT_VALUES: Readonly<Record<string, readonly string[]>> = {
  "date": ["2024-05-17", "2025-01-08"],
  "date-time": ["2024-05-17T09:30:00Z", "2025-01-08T14:05:00Z"],
  "time": ["09:30:00Z", "14:05:00Z"],
  "duration": ["PT1M", "P1D"],
  "email": ["alice@example.com", "bob@example.org"],
  "idn-email": ["alice@example.com"],
  "hostname": ["example.com", "docs.example.org"],
  "idn-hostname": ["example.com"],
  "ipv4": ["192.0.2.10", "198.51.100.7"],
  "ipv6": ["2001:db8::1"],
  "uri": ["https://example.com/", "https://example.org/docs"],
  "uri-reference": ["https://example.com/", "/docs/readme"],
  "iri": ["https://example.com/"],
  "iri-reference": ["https://example.com/"],
  "url": ["https://example.com/"],
  "uri-template": ["https://example.com/items/{id}"],
  "json-pointer": ["/items/0"],
  "relative-json-pointer": ["0/items"],
  "regex": ["^[a-z]+$"],
  "byte": ["aGVsbG8gd29ybGQ="],
  "binary": ["hello world"],
  "password": ["verity-test-password"],
};

/**
 * A realistic string for a `format`, or null for a format we do not know.
 *
 * @example
 * ```ts
 * import { createPrng } from "./prng.ts";
 * formatValue("email", createPrng(1)); // "alice@example.com" or "bob@example.org"
 * ```
 */
export function formatValue(format: string, prng: Prng): string | null {
  if (format === "uuid") return uuidV4(prng);
  const list = FORMAT_VALUES[format];
  return list === undefined ? null : prng.pick(list);
}

/** A version-4-shaped UUID drawn from the generator (reproducible). */
export function uuidV4(prng: Prng): string {
  const hex = (n: number): string => {
    let s = "";
    for (let i = 0; i < n; i++) s += prng.int(0, 15).toString(16);
    return s;
  };
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${"89ab"[prng.int(0, 3)]}${hex(3)}-${
    hex(12)
  }`;
}

/**
 * Realistic values from a property's name, matched on whole words
 * (`cityName` → city, `baseURL` → url, `IPAddress` → ip address). Pure.
 *
 * @module
 */

/** A realistic value source for properties whose name contains certain words. */
export interface NameHint {
  /** The hint's label in evidence, e.g. `city`. */
  label: string;
  /** Word sequences that select this hint (each a list of lower-case words). */
  words: readonly (readonly string[])[];
  /** Realistic strings, in order of preference. */
  strings?: readonly string[];
  /** Realistic numbers, in order of preference. */
  numbers?: readonly number[];
  /** Realistic booleans. */
  booleans?: readonly boolean[];
  /**
   * How specific the hint is: a more specific hint wins (`cityName` is a city,
   * not a name). Multi-word matches always rank above single words.
   */
  rank: 1 | 2;
}

/**
 * A row of the table: `words` lists the word sequences that select it and
 * `s` its strings, each separated by `|`; `generic` ranks it below the rest.
 */
function hint(
  label: string,
  words: string,
  v: { s?: string; n?: number[]; b?: boolean[]; generic?: true },
): NameHint {
  return {
    label,
    words: words.split("|").map((seq) => seq.split(" ")),
    ...(v.s !== undefined ? { strings: v.s.split("|") } : {}),
    ...(v.n !== undefined ? { numbers: v.n } : {}),
    ...(v.b !== undefined ? { booleans: v.b } : {}),
    rank: v.generic ? 1 : 2,
  };
}

/**
 * The hint table. Values are realistic but inert: reserved example domains,
 * documentation IP ranges, fictional phone numbers.
 */
export const NAME_HINTS: readonly NameHint[] = [
  // Multi-word names first; they rank above single words automatically.
  hint("file_name", "file name|filename", { s: "notes.txt|report.pdf" }),
  hint("user_name", "user name|username|login|handle", { s: "alice|bob" }),
  hint("first_name", "first name|given name|firstname", { s: "Alice|Maria" }),
  hint("last_name", "last name|family name|lastname|surname", {
    s: "Martin|Tanaka",
  }),
  hint("full_name", "full name|display name|fullname", {
    s: "Alice Martin|Kenji Tanaka",
  }),
  hint("country_code", "country code", { s: "FR|JP|CA" }),
  hint("language_code", "language code|lang code", { s: "en|fr" }),
  hint("currency_code", "currency code", { s: "EUR|USD|JPY" }),
  hint("postal_code", "postal code|post code|zip code|zip|postcode|zipcode", {
    s: "75001|10115",
  }),
  hint("phone", "phone number|phone|telephone|mobile", {
    s: "+1-202-555-0143",
  }),
  hint("ip", "ip address|ip|ipv4", { s: "192.0.2.10" }),
  hint("date_time", "date time|datetime|timestamp", {
    s: "2024-05-17T09:30:00Z",
  }),
  hint("time_zone", "time zone|timezone|tz", {
    s: "Europe/Paris|America/New_York|Asia/Tokyo",
  }),
  hint("dry_run", "dry run|dryrun", { b: [true] }),
  hint("api_key", "api key|apikey|token|secret|password", {
    s: "verity-test-token",
  }),
  hint("page_size", "page size|per page|max results", { n: [5, 10] }),
  // Specific single words.
  hint("email", "email|e mail|mail", {
    s: "alice@example.com|bob@example.org",
  }),
  hint("url", "url|uri|link|href|website|homepage|endpoint", {
    s: "https://example.com/|https://example.org/docs",
  }),
  hint("city", "city|town", { s: "Paris|Tokyo|London|Berlin|Toronto" }),
  hint("country", "country", { s: "France|Japan|Canada|Germany" }),
  hint("location", "location|place|destination", {
    s: "Paris, France|Tokyo, Japan",
  }),
  hint("path", "path|filepath", { s: "notes.txt|docs/readme.md" }),
  hint("directory", "directory|dir|folder", { s: "docs|projects" }),
  hint("query", "query|search|q|keyword|term", {
    s: "weather in Paris|open source licenses",
  }),
  hint("question", "question|prompt", { s: "What is the capital of France?" }),
  hint("topic", "topic|subject", { s: "renewable energy|climate change" }),
  hint("language", "language|lang|locale", { s: "en|fr" }),
  hint("currency", "currency", { s: "EUR|USD|JPY" }),
  hint("uuid", "uuid|guid", { s: "3f2b8c1e-7a4d-4e9b-9c2a-5d6e7f8a9b0c" }),
  hint("hostname", "hostname|host|domain", { s: "example.com" }),
  hint("port", "port", { n: [8080, 443] }),
  hint("date", "date|birthday|birthdate", { s: "2024-05-17|2025-01-08" }),
  hint("time", "time", { s: "09:30:00Z" }),
  hint("year", "year", { s: "2024", n: [2024] }),
  hint("month", "month", { s: "2024-05", n: [5] }),
  hint("latitude", "latitude|lat", { n: [48.8566, 35.6762] }),
  hint("longitude", "longitude|lon|lng", { n: [2.3522, 139.6503] }),
  hint("age", "age", { n: [34] }),
  hint("price", "price|cost|amount|total", { n: [19.99, 42] }),
  hint("quantity", "quantity|qty", { n: [2, 3] }),
  hint("count", "count|limit", { n: [3, 5] }),
  hint("page", "page", { n: [1] }),
  hint("offset", "offset|skip|start", { n: [0] }),
  hint("duration", "duration|timeout|delay|seconds|interval", {
    s: "PT1M",
    n: [1, 2],
  }),
  hint("temperature", "temperature", { n: [21] }),
  hint("version", "version", { s: "1.0.0" }),
  hint("sha", "sha|hash|commit|revision", {
    s: "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
  }),
  hint("owner", "owner|org|organization|organisation", { s: "octocat" }),
  hint("repository", "repo|repository", { s: "hello-world" }),
  hint("branch", "branch", { s: "main" }),
  hint("symbol", "symbol|ticker", { s: "AAPL|MSFT" }),
  hint("color", "color|colour", { s: "blue|green" }),
  hint("expression", "expression|formula", { s: "2 + 2" }),
  hint("title", "title|headline", { s: "Quarterly report|Meeting notes" }),
  hint("tag", "tag|label|category", { s: "urgent|research" }),
  hint("word", "word", { s: "serendipity" }),
  // Generic words: used only when nothing more specific matches.
  hint(
    "text",
    "message|text|content|body|comment|note|description|summary|input",
    {
      s: "The meeting is moved to Thursday at 10am.|Hello from verity",
      generic: true,
    },
  ),
  hint("name", "name", { s: "Alice Martin|Project Apollo", generic: true }),
  hint("id", "id|identifier", { s: "1|42", n: [1, 42], generic: true }),
  hint("address", "address", { s: "10 Downing Street, London", generic: true }),
  hint("file", "file", { s: "notes.txt", generic: true }),
  hint("size", "top|max|size|num|n|number", { n: [3, 5], generic: true }),
  hint("key", "key", { s: "greeting", generic: true }),
  hint("value", "value", { s: "hello", n: [1], generic: true }),
];

/**
 * Split an identifier into lower-case words: camelCase, PascalCase,
 * snake_case, kebab-case, dots, spaces and acronyms.
 *
 * @example
 * ```ts
 * splitWords("baseURLPath"); // ["base", "url", "path"]
 * splitWords("IPAddress");   // ["ip", "address"]
 * ```
 */
export function splitWords(name: string): string[] {
  const out: string[] = [];
  for (const m of name.matchAll(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g)) {
    out.push(m[0].toLowerCase());
  }
  return out;
}

/**
 * The singular of an English plural, for naming array items
 * (`cities` → `city`, `tags` → `tag`). Words that are not plural come back
 * unchanged.
 */
export function singular(word: string): string {
  if (
    word.length <= 3 || word.endsWith("ss") || word.endsWith("us") ||
    word.endsWith("is")
  ) return word;
  if (word.endsWith("ies")) return word.slice(0, -3) + "y";
  if (/(ses|xes|zes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith("s")) return word.slice(0, -1);
  return word;
}

/** The JSON types a hint can provide values for. */
export type ValueType = "string" | "number" | "integer" | "boolean";

/** The values a hint offers for one JSON type (integers only for `integer`). */
export function hintValues(
  hint: NameHint,
  type: ValueType,
): readonly (string | number | boolean)[] {
  switch (type) {
    case "string":
      return hint.strings ?? [];
    case "number":
      return hint.numbers ?? [];
    case "integer":
      return (hint.numbers ?? []).filter((n) => Number.isInteger(n));
    case "boolean":
      return hint.booleans ?? [];
  }
}

/** Which hint a name selected, and the words that selected it. */
export interface HintMatch {
  hint: NameHint;
  /** The matched words as written in the hint table. */
  matched: string;
}

function findSeq(words: readonly string[], seq: readonly string[]): number {
  outer: for (let i = 0; i + seq.length <= words.length; i++) {
    for (let j = 0; j < seq.length; j++) {
      if (words[i + j] !== seq[j]) continue outer;
    }
    return i;
  }
  return -1;
}

/**
 * Find the most specific hint for a property name. Multi-word matches rank
 * first, then specific words, then generic ones; among equals the later word
 * wins (English puts the head noun last). Plural words also match their
 * singular.
 *
 * @example
 * ```ts
 * matchNameHint("cityName")?.hint.label;     // "city"
 * matchNameHint("userEmail")?.hint.label;    // "email"
 * matchNameHint("maxTokens", "integer")?.hint.label; // "size": token has no numbers
 * ```
 */
export function matchNameHint(
  name: string,
  type?: ValueType,
): HintMatch | null {
  const raw = splitWords(name);
  if (raw.length === 0) return null;
  const words = raw.map((x) => singular(x));
  let best: { match: HintMatch; score: number } | null = null;
  for (const hint of NAME_HINTS) {
    if (type !== undefined && hintValues(hint, type).length === 0) continue;
    for (const seq of hint.words) {
      for (const list of [raw, words]) {
        const at = findSeq(list, seq);
        if (at === -1) continue;
        // Score: multi-word > rank; then position of the match's last word.
        const score = (seq.length > 1 ? 1000 : 0) + hint.rank * 100 +
          (at + seq.length);
        if (best === null || score > best.score) {
          best = { match: { hint, matched: seq.join(" ") }, score };
        }
      }
    }
  }
  return best?.match ?? null;
}

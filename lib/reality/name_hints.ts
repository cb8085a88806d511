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

const w = (...seqs: string[]): string[][] => seqs.map((s) => s.split(" "));

/**
 * The hint table. Values are realistic but inert: reserved example domains,
 * documentation IP ranges, fictional phone numbers.
 */
export const NAME_HINTS: readonly NameHint[] = [
  // Multi-word names first; they rank above single words automatically.
  {
    label: "file_name",
    words: w("file name", "filename"),
    strings: ["notes.txt", "report.pdf"],
    rank: 2,
  },
  {
    label: "user_name",
    words: w("user name", "username", "login", "handle"),
    strings: ["alice", "bob"],
    rank: 2,
  },
  {
    label: "first_name",
    words: w("first name", "given name", "firstname"),
    strings: ["Alice", "Maria"],
    rank: 2,
  },
  {
    label: "last_name",
    words: w("last name", "family name", "lastname", "surname"),
    strings: ["Martin", "Tanaka"],
    rank: 2,
  },
  {
    label: "full_name",
    words: w("full name", "display name", "fullname"),
    strings: ["Alice Martin", "Kenji Tanaka"],
    rank: 2,
  },
  {
    label: "country_code",
    words: w("country code"),
    strings: ["FR", "JP", "CA"],
    rank: 2,
  },
  {
    label: "language_code",
    words: w("language code", "lang code"),
    strings: ["en", "fr"],
    rank: 2,
  },
  {
    label: "currency_code",
    words: w("currency code"),
    strings: ["EUR", "USD", "JPY"],
    rank: 2,
  },
  {
    label: "postal_code",
    words: w(
      "postal code",
      "post code",
      "zip code",
      "zip",
      "postcode",
      "zipcode",
    ),
    strings: ["75001", "10115"],
    rank: 2,
  },
  {
    label: "phone",
    words: w("phone number", "phone", "telephone", "mobile"),
    strings: ["+1-202-555-0143"],
    rank: 2,
  },
  {
    label: "ip",
    words: w("ip address", "ip", "ipv4"),
    strings: ["192.0.2.10"],
    rank: 2,
  },
  {
    label: "date_time",
    words: w("date time", "datetime", "timestamp"),
    strings: ["2024-05-17T09:30:00Z"],
    rank: 2,
  },
  {
    label: "time_zone",
    words: w("time zone", "timezone", "tz"),
    strings: ["Europe/Paris", "America/New_York", "Asia/Tokyo"],
    rank: 2,
  },
  {
    label: "dry_run",
    words: w("dry run", "dryrun"),
    booleans: [true],
    rank: 2,
  },
  {
    label: "api_key",
    words: w("api key", "apikey", "token", "secret", "password"),
    strings: ["verity-test-token"],
    rank: 2,
  },
  {
    label: "page_size",
    words: w("page size", "per page", "max results"),
    numbers: [5, 10],
    rank: 2,
  },
  // Specific single words.
  {
    label: "email",
    words: w("email", "e mail", "mail"),
    strings: ["alice@example.com", "bob@example.org"],
    rank: 2,
  },
  {
    label: "url",
    words: w("url", "uri", "link", "href", "website", "homepage", "endpoint"),
    strings: ["https://example.com/", "https://example.org/docs"],
    rank: 2,
  },
  {
    label: "city",
    words: w("city", "town"),
    strings: ["Paris", "Tokyo", "London", "Berlin", "Toronto"],
    rank: 2,
  },
  {
    label: "country",
    words: w("country"),
    strings: ["France", "Japan", "Canada", "Germany"],
    rank: 2,
  },
  {
    label: "location",
    words: w("location", "place", "destination"),
    strings: ["Paris, France", "Tokyo, Japan"],
    rank: 2,
  },
  {
    label: "path",
    words: w("path", "filepath"),
    strings: ["notes.txt", "docs/readme.md"],
    rank: 2,
  },
  {
    label: "directory",
    words: w("directory", "dir", "folder"),
    strings: ["docs", "projects"],
    rank: 2,
  },
  {
    label: "query",
    words: w("query", "search", "q", "keyword", "term"),
    strings: ["weather in Paris", "open source licenses"],
    rank: 2,
  },
  {
    label: "question",
    words: w("question", "prompt"),
    strings: ["What is the capital of France?"],
    rank: 2,
  },
  {
    label: "topic",
    words: w("topic", "subject"),
    strings: ["renewable energy", "climate change"],
    rank: 2,
  },
  {
    label: "language",
    words: w("language", "lang", "locale"),
    strings: ["en", "fr"],
    rank: 2,
  },
  {
    label: "currency",
    words: w("currency"),
    strings: ["EUR", "USD", "JPY"],
    rank: 2,
  },
  {
    label: "uuid",
    words: w("uuid", "guid"),
    strings: ["3f2b8c1e-7a4d-4e9b-9c2a-5d6e7f8a9b0c"],
    rank: 2,
  },
  {
    label: "hostname",
    words: w("hostname", "host", "domain"),
    strings: ["example.com"],
    rank: 2,
  },
  { label: "port", words: w("port"), numbers: [8080, 443], rank: 2 },
  {
    label: "date",
    words: w("date", "birthday", "birthdate"),
    strings: ["2024-05-17", "2025-01-08"],
    rank: 2,
  },
  { label: "time", words: w("time"), strings: ["09:30:00Z"], rank: 2 },
  {
    label: "year",
    words: w("year"),
    numbers: [2024],
    strings: ["2024"],
    rank: 2,
  },
  {
    label: "month",
    words: w("month"),
    numbers: [5],
    strings: ["2024-05"],
    rank: 2,
  },
  {
    label: "latitude",
    words: w("latitude", "lat"),
    numbers: [48.8566, 35.6762],
    rank: 2,
  },
  {
    label: "longitude",
    words: w("longitude", "lon", "lng"),
    numbers: [2.3522, 139.6503],
    rank: 2,
  },
  { label: "age", words: w("age"), numbers: [34], rank: 2 },
  {
    label: "price",
    words: w("price", "cost", "amount", "total"),
    numbers: [19.99, 42],
    rank: 2,
  },
  { label: "quantity", words: w("quantity", "qty"), numbers: [2, 3], rank: 2 },
  { label: "count", words: w("count", "limit"), numbers: [3, 5], rank: 2 },
  { label: "page", words: w("page"), numbers: [1], rank: 2 },
  {
    label: "offset",
    words: w("offset", "skip", "start"),
    numbers: [0],
    rank: 2,
  },
  {
    label: "duration",
    words: w("duration", "timeout", "delay", "seconds", "interval"),
    numbers: [1, 2],
    strings: ["PT1M"],
    rank: 2,
  },
  { label: "temperature", words: w("temperature"), numbers: [21], rank: 2 },
  { label: "version", words: w("version"), strings: ["1.0.0"], rank: 2 },
  {
    label: "sha",
    words: w("sha", "hash", "commit", "revision"),
    strings: ["a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"],
    rank: 2,
  },
  {
    label: "owner",
    words: w("owner", "org", "organization", "organisation"),
    strings: ["octocat"],
    rank: 2,
  },
  {
    label: "repository",
    words: w("repo", "repository"),
    strings: ["hello-world"],
    rank: 2,
  },
  { label: "branch", words: w("branch"), strings: ["main"], rank: 2 },
  {
    label: "symbol",
    words: w("symbol", "ticker"),
    strings: ["AAPL", "MSFT"],
    rank: 2,
  },
  {
    label: "color",
    words: w("color", "colour"),
    strings: ["blue", "green"],
    rank: 2,
  },
  {
    label: "expression",
    words: w("expression", "formula"),
    strings: ["2 + 2"],
    rank: 2,
  },
  {
    label: "title",
    words: w("title", "headline"),
    strings: ["Quarterly report", "Meeting notes"],
    rank: 2,
  },
  {
    label: "tag",
    words: w("tag", "label", "category"),
    strings: ["urgent", "research"],
    rank: 2,
  },
  { label: "word", words: w("word"), strings: ["serendipity"], rank: 2 },
  // Generic words: used only when nothing more specific matches.
  {
    label: "text",
    words: w(
      "message",
      "text",
      "content",
      "body",
      "comment",
      "note",
      "description",
      "summary",
      "input",
    ),
    strings: ["The meeting is moved to Thursday at 10am.", "Hello from verity"],
    rank: 1,
  },
  {
    label: "name",
    words: w("name"),
    strings: ["Alice Martin", "Project Apollo"],
    rank: 1,
  },
  {
    label: "id",
    words: w("id", "identifier"),
    strings: ["1", "42"],
    numbers: [1, 42],
    rank: 1,
  },
  {
    label: "address",
    words: w("address"),
    strings: ["10 Downing Street, London"],
    rank: 1,
  },
  { label: "file", words: w("file"), strings: ["notes.txt"], rank: 1 },
  {
    label: "size",
    words: w("top", "max", "size", "num", "n", "number"),
    numbers: [3, 5],
    rank: 1,
  },
  { label: "key", words: w("key"), strings: ["greeting"], rank: 1 },
  {
    label: "value",
    words: w("value"),
    strings: ["hello"],
    numbers: [1],
    rank: 1,
  },
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

/**
 * Read a text file that may be stored gzip-compressed (a name ending in
 * `.gz`), such as the published reports under results/. Effectful.
 *
 * @module
 */

/**
 * The text of `path`, gunzipped first when the name ends in `.gz`.
 * Throws the read error as is, and a `SyntaxError` naming the file when a
 * `.gz` file is not valid gzip. Requires `--allow-read`.
 *
 * @example
 * ```ts
 * const text = await readTextMaybeGzip("results/memory-2026-11-30/report.json.gz");
 * const report = JSON.parse(text);
 * ```
 */
export async function readTextMaybeGzip(path: string): Promise<string> {
  if (!path.endsWith(".gz")) return await Deno.readTextFile(path);
  const bytes = await Deno.readFile(path);
  try {
    const stream = new Blob([bytes]).stream().pipeThrough(
      new DecompressionStream("gzip"),
    );
    return await new Response(stream).text();
  } catch (e) {
    throw new SyntaxError(`${path}: not gzip (${(e as Error).message})`);
  }
}

/**
 * Reading the JSON documents the evidence commands take (manifests,
 * declarations, observations, ledgers).
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { parsePythonJson, sha256Hex } from "./canonical.ts";

/** A JSON document read from disk. */
export interface JsonDocument {
  path: string;
  /** Parsed as Python's `json` would (see `parsePythonJson`). */
  value: unknown;
  /** `sha256:` of the file's bytes. */
  sha256: string;
}

/**
 * Read and parse a JSON file. Throws {@linkcode UsageError} naming the file
 * when it is missing, unreadable or not JSON (exit 2).
 */
export async function readJsonDocument(path: string): Promise<JsonDocument> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new UsageError(`${path}: no such file`);
    }
    throw new UsageError(`${path}: cannot read: ${(e as Error).message}`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${path}: not valid UTF-8`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return {
      path,
      value: parsePythonJson(text),
      sha256: "sha256:" + sha256Hex(bytes),
    };
  } catch (e) {
    throw new UsageError(`${path}: not valid JSON: ${(e as Error).message}`);
  }
}

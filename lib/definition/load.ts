/**
 * Load a definition from disk: find the file (a directory, a `.toml` path or
 * a bare name under `fixtures/` then `targets/`), parse it strictly, and
 * digest it with every seed's bytes. The seeded-state check (masks and
 * classifications against the seeded state) is `checkSeededState` in
 * `seeded.ts`, called by the commands that observe state.
 *
 * Requires `--allow-read`.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { DefinitionError, DefinitionLookupError } from "../errors.ts";
import { exists, isDirectory } from "../common/exists.ts";
import { findExecutable } from "../common/executable.ts";
import { firstInvalidUtf8 } from "../common/utf8.ts";
import { normalizeAbsolute } from "../common/paths.ts";
import { parseDefinition } from "./parse.ts";
import { seedPath, walkSeed } from "./seeds.ts";
import type { Definition } from "./types.ts";

/**
 * The largest seed file verity reads as text (a SQL script, a JSON or JSONL
 * document) or as bytes (each file of an fs seed): 256 MiB. Its text must
 * fit one V8 string twice over (read, then parsed or executed).
 */
export const MAX_TEXT_SEED_BYTES = 256 * 1024 * 1024;

/**
 * The largest SQLite database a seed may be, as an image or as the database
 * a SQL script builds: 128 MiB. The seed's snapshot is held in memory for
 * the whole run (every session is compared with it), its records decoded:
 * several times the file's bytes.
 */
export const MAX_IMAGE_SEED_BYTES = 128 * 1024 * 1024;

const SQLITE_MAGIC = "SQLite format 3\0";

/** Options of {@linkcode loadDefinition}. */
export interface LoadDefinitionOptions {
  /** Where bare names are looked up first. @default "fixtures" */
  fixturesDir?: string;
  /** Where bare names are looked up second. @default "targets" */
  targetsDir?: string;
}

/**
 * Find and load a definition strictly.
 *
 * `pathOrName` is a directory holding `fixture.toml` or `target.toml`, a
 * path to a `.toml` file, or a bare name looked up under `fixtures/` then
 * `targets/`. Requires `--allow-read`.
 *
 * @example
 * ```ts
 * const def = await loadDefinition("liar-concurrent");
 * console.log(def.digest, def.tools.length);
 * ```
 */
export async function loadDefinition(
  pathOrName: string,
  options: LoadDefinitionOptions = {},
): Promise<Definition> {
  const file = await locate(pathOrName, options);
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(file);
  } catch (e) {
    throw new DefinitionError(file, "", `cannot read: ${(e as Error).message}`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new DefinitionError(
      file,
      "",
      `not valid UTF-8 (at or after byte ${firstInvalidUtf8(bytes)})`,
    );
  }
  const def = parseDefinition(text, file);
  def.digest = await definitionDigest(def, text);
  checkAllowedPrograms(def);
  checkReadPaths(def);
  return def;
}

/**
 * Every read path and the working directory that name a place on the host
 * (absolute, or under `{target}`, `..` resolved) must exist: the launcher
 * refuses a missing one, which would fail every session (SETUP_FAILED).
 */
function checkReadPaths(def: Definition): void {
  const named: [string, string][] = [
    ...def.read.map((p, i) =>
      [p, def.readKeys?.[i] ?? `${def.kind}.read[${i}]`] as [string, string]
    ),
    ...(def.cwd === null ? [] : [[def.cwd, `${def.kind}.cwd`]] as [
      string,
      string,
    ][]),
  ];
  for (const [p, key] of named) {
    const t = p.startsWith("{target}") ? def.dir + p.slice(8) : p;
    if (!t.startsWith("/")) continue;
    const at = normalizeAbsolute(t);
    try {
      Deno.statSync(at);
    } catch {
      throw new DefinitionError(
        def.file,
        key,
        `${JSON.stringify(p)} (${at}) does not exist`,
      );
    }
  }
}

/**
 * Every program `allow.run` names must be installed (on the server's PATH,
 * or an executable at its absolute path): a missing one is a definition
 * error before anything runs, not a battery of SETUP_FAILED.
 */
function checkAllowedPrograms(def: Definition): void {
  const path = def.env.PATH ?? Deno.env.get("PATH") ??
    "/usr/local/bin:/usr/bin:/bin";
  def.allow.run.forEach((name, i) => {
    if (findExecutable(name, path) !== null) return;
    throw new DefinitionError(
      def.file,
      `${def.kind}.allow.run[${i}]`,
      `program ${JSON.stringify(name)} is not installed (${
        name.startsWith("/") ? "no executable file there" : "not found on PATH"
      })`,
    );
  });
}

/** Refuse a seed file over its limit, naming it and the limit (exit 2, before anything is read). */
function checkSeedSize(
  def: Definition,
  keyPath: string,
  p: string,
  size: number,
  /** A sqlite adapter's seed (an image has the lower limit). */
  sqlite: boolean,
): void {
  const image = sqlite && size > MAX_IMAGE_SEED_BYTES &&
    isSqliteImageFile(p);
  const limit = image ? MAX_IMAGE_SEED_BYTES : MAX_TEXT_SEED_BYTES;
  if (size <= limit) return;
  throw new DefinitionError(
    def.file,
    keyPath,
    `seed ${p} is ${size} bytes, over the limit of ${limit} bytes (${
      limit / 1024 / 1024
    } MiB) for ${
      image ? "a SQLite database image" : "a seed read as text or bytes"
    }`,
  );
}

/** Whether the file at `p` starts with SQLite's database header. */
export function isSqliteImageFile(p: string): boolean {
  using f = Deno.openSync(p);
  const head = new Uint8Array(16);
  return f.readSync(head) === 16 &&
    new TextDecoder().decode(head) === SQLITE_MAGIC;
}

/** Hash a file in chunks (a SQLite image seed may be large). */
async function hashFile(
  h: ReturnType<typeof createHash>,
  tag: string,
  p: string,
  size: number,
): Promise<void> {
  h.update(`${tag}\0${size}\0`);
  // The readable closes the file when it ends.
  const f = await Deno.open(p);
  let seen = 0;
  for await (const chunk of f.readable) {
    h.update(chunk);
    seen += chunk.length;
  }
  if (seen !== size) {
    throw new DefinitionLookupError(`${p}: changed while it was read`);
  }
}

function absolute(p: string): string {
  const joined = p.startsWith("/") ? p : `${Deno.cwd()}/${p}`;
  return normalizeAbsolute(joined);
}

async function locate(
  pathOrName: string,
  options: LoadDefinitionOptions,
): Promise<string> {
  const inDir = async (dir: string): Promise<string | null> => {
    const f = `${dir}/fixture.toml`;
    const t = `${dir}/target.toml`;
    const hasF = await exists(f);
    const hasT = await exists(t);
    if (hasF && hasT) {
      throw new DefinitionLookupError(
        `${dir}: holds both fixture.toml and target.toml; name the file to load`,
      );
    }
    return hasF ? f : hasT ? t : null;
  };
  if (pathOrName === "") {
    throw new DefinitionLookupError("empty definition name");
  }
  if (await isDirectory(pathOrName)) {
    const found = await inDir(absolute(pathOrName));
    if (found) return found;
    throw new DefinitionLookupError(
      `${
        absolute(pathOrName)
      }: no fixture.toml or target.toml in this directory`,
    );
  }
  if (pathOrName.endsWith(".toml")) {
    if (await exists(pathOrName)) return absolute(pathOrName);
    throw new DefinitionLookupError(
      `${absolute(pathOrName)}: no such definition file`,
    );
  }
  if (!pathOrName.includes("/")) {
    const tried: string[] = [];
    for (
      const base of [
        options.fixturesDir ?? "fixtures",
        options.targetsDir ?? "targets",
      ]
    ) {
      const dir = absolute(`${base}/${pathOrName}`);
      tried.push(dir);
      if (await isDirectory(dir)) {
        const found = await inDir(dir);
        if (found) return found;
      }
    }
    throw new DefinitionLookupError(
      `no definition named ${JSON.stringify(pathOrName)} (looked in ${
        tried.join(", ")
      })`,
    );
  }
  throw new DefinitionLookupError(
    `${
      absolute(pathOrName)
    }: no such definition (expected a directory or a .toml file)`,
  );
}

/** The digest over the toml text and every seed's bytes; missing seeds are errors. */
async function definitionDigest(
  def: Definition,
  text: string,
): Promise<string> {
  const h = createHash("sha256");
  const frame = (tag: string, bytes: Uint8Array | string) => {
    const b = typeof bytes === "string"
      ? new TextEncoder().encode(bytes)
      : bytes;
    h.update(`${tag}\0${b.length}\0`);
    h.update(b);
  };
  frame("toml", text);
  for (const [i, a] of def.adapters.entries()) {
    if (a.seed === null) continue;
    const p = seedPath(def, a.seed);
    const keyPath = `adapters[${i}].seed`;
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(p);
    } catch {
      throw new DefinitionError(
        def.file,
        keyPath,
        `seed ${JSON.stringify(a.seed)} not found (${p})`,
      );
    }
    // Through symlinks too, a seed stays inside the definition's directory.
    const real = await Deno.realPath(p);
    const home = await Deno.realPath(def.dir);
    if (real !== home && !real.startsWith(home + "/")) {
      throw new DefinitionError(
        def.file,
        keyPath,
        `seed ${
          JSON.stringify(a.seed)
        } resolves outside the definition's directory (${real})`,
      );
    }
    if (a.kind === "fs") {
      if (!info.isDirectory) {
        throw new DefinitionError(
          def.file,
          keyPath,
          `an fs seed must be a directory: ${p}`,
        );
      }
      frame(`seed:${i}:dir`, a.seed);
      for (const e of await walkSeed(p)) {
        if (e.kind === "file") {
          const size = (await Deno.stat(`${p}/${e.rel}`)).size;
          checkSeedSize(def, keyPath, `${p}/${e.rel}`, size, false);
          frame(`file:${e.rel}`, await Deno.readFile(`${p}/${e.rel}`));
        } else if (e.kind === "symlink") {
          frame(`symlink:${e.rel}`, await Deno.readLink(`${p}/${e.rel}`));
        } else frame(`dir:${e.rel}`, "");
      }
    } else {
      if (!info.isFile) {
        throw new DefinitionError(
          def.file,
          keyPath,
          `a ${a.kind} seed must be a file: ${p}`,
        );
      }
      checkSeedSize(def, keyPath, p, info.size, a.kind === "sqlite");
      await hashFile(h, `seed:${i}:file`, p, info.size);
    }
  }
  return "sha256:" + h.digest("hex");
}

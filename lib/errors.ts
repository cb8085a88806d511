/**
 * Errors a caller must catch: bad input. Libraries throw the domain error
 * that says what was wrong (a definition, a prepared target, an evidence
 * file, ...); only the command line (`lib/cli/`, `main.ts`) turns an
 * {@linkcode InputError} into exit code 2, and only it throws
 * {@linkcode UsageError}.
 *
 * @module
 */

/** Bad input (arguments, files, definitions, the machine): the base of every domain error. */
export class InputError extends Error {
  override name = "InputError";
}

/** Bad command-line usage: thrown by `lib/cli/` and `main.ts` only. */
export class UsageError extends InputError {
  override name = "UsageError";
}

/** A definition that cannot be found, or a directory holding two. */
export class DefinitionLookupError extends InputError {
  override name = "DefinitionLookupError";
}

/** An unknown placeholder, or one used where it has no value. */
export class PlaceholderError extends InputError {
  override name = "PlaceholderError";
}

/** A target that cannot be prepared or run from the prepared cache. */
export class PrepareError extends InputError {
  override name = "PrepareError";
}

/** An evidence file (ledger, manifest, report) missing, unreadable or not what it claims. */
export class EvidenceError extends InputError {
  override name = "EvidenceError";
}

/** An MCP client configuration that does not name a usable server. */
export class ConfigError extends InputError {
  override name = "ConfigError";
}

/** What the machine lacks or holds in the way (PostgreSQL missing, a state directory not empty). */
export class EnvironmentError extends InputError {
  override name = "EnvironmentError";
}

/** A tool selection (`--tool`) that names nothing in the definition. */
export class SelectionError extends InputError {
  override name = "SelectionError";
}

/** A census list, shard or output directory that cannot be used. */
export class CensusError extends InputError {
  override name = "CensusError";
}

/** An invalid definition file, naming the file and the key path. */
export class DefinitionError extends InputError {
  override name = "DefinitionError";
  readonly file: string;
  readonly keyPath: string;
  constructor(file: string, keyPath: string, message: string) {
    super(`${file}: ${keyPath ? keyPath + ": " : ""}${message}`);
    this.file = file;
    this.keyPath = keyPath;
  }
}

/** A server that could not be started, listed or spoken to: exit code 2. */
export class ServerError extends InputError {
  override name = "ServerError";
}

/**
 * A seed that does what a seed may not (a shell escape, a program, a file
 * outside the state directory), naming the seed file and, when known, the
 * line: `fixtures/x/seed.sql:3: ATTACH is not allowed in a seed`.
 */
export class SeedError extends DefinitionError {
  override name = "SeedError";
  /** The seed file, as shown. */
  readonly seed: string;
  /** The 1-based line, or null when the engine refused it without one. */
  readonly line: number | null;
  constructor(
    definitionFile: string,
    keyPath: string,
    where: { seed: string; line: number | null },
    message: string,
  ) {
    super(definitionFile, keyPath, message);
    this.seed = where.seed;
    this.line = where.line;
    this.message = `${where.seed}${
      where.line === null ? "" : `:${where.line}`
    }: ${message}`;
  }
}

/**
 * Errors a caller must catch: bad input that ends in exit code 2.
 *
 * @module
 */

/** Bad input from the user (arguments, files, definitions): exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** An invalid definition file, naming the file and the key path. */
export class DefinitionError extends UsageError {
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
export class ServerError extends UsageError {
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

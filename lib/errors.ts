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

/**
 * The one "is there something at this path" test. Effectful (reads file
 * metadata).
 *
 * @module
 */

/** Options of {@linkcode exists}. */
export interface ExistsOptions {
  /**
   * Follow a symbolic link at `path` (`Deno.stat`); when false a link,
   * even a dangling one, counts as existing (`Deno.lstat`).
   * @default true
   */
  followSymlinks?: boolean;
}

/**
 * Whether `path` names an existing file, directory or (with
 * `followSymlinks: false`) link. A missing path, or one through a
 * non-directory, is false; any other failure (permission denied, I/O)
 * is thrown rather than taken for absence. Requires `--allow-read`.
 *
 * @example
 * ```ts
 * if (!(await exists("deno.json"))) console.log("no config here");
 * ```
 */
export async function exists(
  path: string,
  options: ExistsOptions = {},
): Promise<boolean> {
  try {
    if (options.followSymlinks === false) await Deno.lstat(path);
    else await Deno.stat(path);
    return true;
  } catch (e) {
    if (
      e instanceof Deno.errors.NotFound ||
      e instanceof Deno.errors.NotADirectory
    ) return false;
    throw e;
  }
}

/** Whether `path` is a directory (false when it is missing or cannot be read). Requires `--allow-read`. */
export function isDirectory(path: string): Promise<boolean> {
  return Deno.stat(path).then((s) => s.isDirectory, () => false);
}

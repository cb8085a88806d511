/**
 * Path helpers, in one place: state-relative labels (locations, fs
 * regions) and absolute POSIX paths. Pure.
 *
 * @module
 */

/**
 * Normalise a path relative to the state directory: no "./" segments, no
 * trailing "/", and "." for the directory itself.
 *
 * @example
 * ```ts
 * normalizeLabel("./notes/"); // "notes"
 * normalizeLabel(""); // "."
 * ```
 */
export function normalizeLabel(label: string): string {
  const parts = label.split("/").filter((s) => s !== "" && s !== ".");
  return parts.length === 0 ? "." : parts.join("/");
}

/** Whether `path` equals `base` or lies under it ("." contains everything). */
export function isUnder(path: string, base: string): boolean {
  return base === "." || path === base || path.startsWith(base + "/");
}

/**
 * Resolve `.` and `..` segments of an absolute POSIX path (no file system
 * access; `..` above the root stays at the root).
 *
 * @example
 * ```ts
 * normalizeAbsolute("/a/./b/../c/"); // "/a/c"
 * ```
 */
export function normalizeAbsolute(p: string): string {
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") out.pop();
    else out.push(seg);
  }
  return "/" + out.join("/");
}

/**
 * Whether the absolute `path` is `dir` or lies inside it (a prefix that
 * stops at a "/": `/a/bc` is not inside `/a/b`).
 *
 * @example
 * ```ts
 * isWithin("/state/a.db", "/state"); // true
 * isWithin("/statex", "/state"); // false
 * ```
 */
export function isWithin(path: string, dir: string): boolean {
  if (path === dir) return true;
  return path.startsWith(dir.endsWith("/") ? dir : dir + "/");
}

/**
 * State-relative paths: labels, locations and fs regions. Pure.
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

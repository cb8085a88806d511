/**
 * Small helpers with one copy each: `isPlainObject` (pure), `exists` and
 * `readTextMaybeGzip` (read the disk).
 *
 * @module
 */
export * from "./exists.ts";
export * from "./is_plain_object.ts";
export * from "./read_text.ts";

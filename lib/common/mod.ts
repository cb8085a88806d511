/**
 * Small helpers with one copy each: `isPlainObject`, the path helpers and
 * `pool` (pure), `exists` and `readTextMaybeGzip` (read the disk).
 *
 * @module
 */
export * from "./exists.ts";
export * from "./is_plain_object.ts";
export * from "./paths.ts";
export * from "./read_text.ts";
export * from "./closest_names.ts";
export * from "./show_controls.ts";
export * from "./markdown_code.ts";
export * from "./pool.ts";

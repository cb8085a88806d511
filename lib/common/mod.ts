/**
 * Small helpers with one copy each: `isPlainObject`, the path helpers,
 * `firstInvalidUtf8` and `pool` (pure), `exists` and `findExecutable`
 * (read the disk).
 *
 * @module
 */
export * from "./exists.ts";
export * from "./executable.ts";
export * from "./is_plain_object.ts";
export * from "./paths.ts";
export * from "./closest_names.ts";
export * from "./show_controls.ts";
export * from "./utf8.ts";
export * from "./pool.ts";

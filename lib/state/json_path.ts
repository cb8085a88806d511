/**
 * Paths into JSON values: a dotted path (`a.b`) or a JSON pointer
 * (`/a/b~1c`). Used by the json adapter (region selection, identity keys),
 * by masking (`normalize.ts`) and by the seeded-state check. Pure.
 *
 * @module
 */

/** Split a path (`a.b` or JSON pointer `/a/b`) into segments. */
export function pathSegments(path: string): string[] {
  if (path.startsWith("/")) {
    return path.slice(1).split("/").map((s) =>
      s.replaceAll("~1", "/").replaceAll("~0", "~")
    );
  }
  if (path === "") return [];
  return path.split(".");
}

/** The value at a path, or undefined. */
export function getPath(v: unknown, path: string): unknown {
  let cur = v;
  for (const seg of pathSegments(path)) {
    if (cur === null || typeof cur !== "object") return undefined;
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(seg)) return undefined;
      cur = cur[Number(seg)];
    } else {
      if (!Object.hasOwn(cur, seg)) return undefined;
      cur = (cur as Record<string, unknown>)[seg];
    }
  }
  return cur;
}

/** A copy of `v` with the value at `path` replaced by `f(old)`; unchanged when absent. */
export function replacePath(
  v: unknown,
  segs: readonly string[],
  f: (old: unknown) => unknown,
): unknown {
  if (segs.length === 0) return f(v);
  if (v === null || typeof v !== "object") return v;
  const [head, ...rest] = segs as [string, ...string[]];
  if (Array.isArray(v)) {
    if (!/^(0|[1-9][0-9]*)$/.test(head)) return v;
    const i = Number(head);
    if (i >= v.length) return v;
    const copy = v.slice();
    copy[i] = replacePath(v[i], rest, f);
    return copy;
  }
  const o = v as Record<string, unknown>;
  if (!Object.hasOwn(o, head)) return v;
  return { ...o, [head]: replacePath(o[head], rest, f) };
}

/** A copy of `v` without the object member at `segs` (array elements are kept). */
export function removePath(v: unknown, segs: readonly string[]): unknown {
  if (segs.length === 0) return undefined;
  if (v === null || typeof v !== "object") return v;
  const [head, ...rest] = segs as [string, ...string[]];
  if (Array.isArray(v)) return v;
  const o = { ...(v as Record<string, unknown>) };
  if (!Object.hasOwn(o, head)) return v;
  if (rest.length === 0) delete o[head];
  else o[head] = removePath(o[head], rest);
  return o;
}

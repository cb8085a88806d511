/**
 * Overlays mounted for server processes in a mount namespace of verity's
 * own, with no process of their own: one `mount(2)` before the spawn, one
 * `umount2(2)` after the exit.
 *
 * The thread that runs JavaScript (which spawns every child) leaves the
 * host's mount namespace once, for a copy whose mounts are slaves of the
 * host's (`unshare(CLONE_NEWNS)`: the host's later mounts still appear,
 * none of verity's leave). Every process verity starts afterwards shares
 * that namespace, so a server's sandbox can bind an overlay mounted there;
 * the host never sees one, and the namespace ends with verity's processes.
 *
 * Only that thread moves (a thread may leave its mount namespace alone),
 * with the threads it starts later; Deno's threads started before it (some
 * run the asynchronous file APIs) stay in the host's, where a mount point
 * is an empty directory. So the mount is only ever the overlay, never its
 * layers: those are plain directories every thread sees alike, read after
 * the overlay is detached.
 *
 * Requires `--allow-ffi`, and root (CAP_SYS_ADMIN).
 *
 * @module
 */
import type { OverlayMount } from "./spawn_spec.ts";

const SYMBOLS = {
  unshare: { parameters: ["i32"], result: "i32" },
  mount: {
    parameters: ["buffer", "buffer", "buffer", "usize", "buffer"],
    result: "i32",
  },
  umount2: { parameters: ["buffer", "i32"], result: "i32" },
  __errno_location: { parameters: [], result: "pointer" },
  strerror: { parameters: ["i32"], result: "pointer" },
} as const;

let libc: Deno.DynamicLibrary<typeof SYMBOLS> | string | undefined;

const cstr = (s: string) => new TextEncoder().encode(`${s}\u0000`);

/** The last error of this thread's libc call, as libc words it. */
function lastError(l: Deno.DynamicLibrary<typeof SYMBOLS>): string {
  const n = new Deno.UnsafePointerView(l.symbols.__errno_location()!)
    .getInt32();
  const p = l.symbols.strerror(n);
  return p === null ? `errno ${n}` : Deno.UnsafePointerView.getCString(p);
}

/** libc, this thread in verity's own mount namespace; or why not. */
function namespace(): Deno.DynamicLibrary<typeof SYMBOLS> | string {
  if (libc !== undefined) return libc;
  let l: Deno.DynamicLibrary<typeof SYMBOLS>;
  try {
    l = Deno.dlopen("libc.so.6", SYMBOLS);
  } catch (e) {
    return libc = `libc cannot be loaded (${(e as Error).message})`;
  }
  const CLONE_NEWNS = 0x20000;
  const MS_REC = 0x4000;
  const MS_SLAVE = 0x80000;
  if (l.symbols.unshare(CLONE_NEWNS) !== 0) {
    return libc = `no mount namespace of verity's own: ${lastError(l)}`;
  }
  if (l.symbols.mount(null, cstr("/"), null, BigInt(MS_REC | MS_SLAVE), null)) {
    return libc = `verity's mount namespace cannot be made a slave: ${
      lastError(l)
    }`;
  }
  return libc = l;
}

/**
 * Mount `m` (an overlay) in verity's mount namespace; null when mounted,
 * else why not (one line).
 *
 * @example
 * ```ts ignore
 * const why = mountOverlay({ target: `${dir}/root`, options: "lowerdir=/,upperdir=...,workdir=..." });
 * if (why === null) unmountOverlay(`${dir}/root`);
 * ```
 */
export function mountOverlay(m: OverlayMount): string | null {
  const l = namespace();
  if (typeof l === "string") return l;
  const r = l.symbols.mount(
    cstr("verity-overlay"),
    cstr(m.target),
    cstr("overlay"),
    0n,
    cstr(m.options),
  );
  return r === 0 ? null : `mount -t overlay fails here: ${lastError(l)}`;
}

/** Detach the overlay mounted at `target` (when it is mounted; never throws). */
export function unmountOverlay(target: string): void {
  const MNT_DETACH = 2;
  if (typeof libc === "object") libc.symbols.umount2(cstr(target), MNT_DETACH);
}

/**
 * A classic-BPF seccomp filter that stops a sandboxed process from creating
 * processes while leaving threads alone. Pure: returns bytes, touches nothing.
 *
 * bubblewrap loads it with `--seccomp FD` just before it executes the server,
 * so the server itself starts normally, but inside it:
 * - `fork`, `vfork`, and `clone` without `CLONE_THREAD` fail with EPERM
 *   (this is what `subprocess`, `posix_spawn` and `system()` use);
 * - `clone3` fails with ENOSYS (its flags live in memory a filter cannot
 *   read), so libc falls back to `clone` for threads, which is allowed;
 * - any syscall made through another ABI (x32, or 32-bit compat on a 64-bit
 *   kernel) fails with EPERM, so the rules cannot be sidestepped.
 *
 * Replacing the server's own image with `execve` stays possible: that starts
 * no additional process, and it keeps every other restriction.
 *
 * @module
 */

/** Architectures the filter knows syscall numbers for. */
export type SeccompArch = "x86_64" | "aarch64";

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_THREAD = 0x00010000;

/** Offsets in `struct seccomp_data`. */
const OFF_NR = 0;
const OFF_ARCH = 4;
const OFF_ARG0_LOW = 16; // little-endian: the low 32 bits of args[0]

interface ArchInfo {
  audit: number;
  /** Syscalls that always create a process. */
  fork: number[];
  clone: number;
  clone3: number;
  /** Numbers at or above this belong to another ABI (x32). */
  abiLimit: number | null;
}

const ARCHES: Record<SeccompArch, ArchInfo> = {
  // AUDIT_ARCH_X86_64; fork 57, vfork 58, clone 56, clone3 435.
  x86_64: {
    audit: 0xc000003e,
    fork: [57, 58],
    clone: 56,
    clone3: 435,
    abiLimit: 0x40000000,
  },
  // AUDIT_ARCH_AARCH64; no fork/vfork syscalls; clone 220, clone3 435.
  aarch64: {
    audit: 0xc00000b7,
    fork: [],
    clone: 220,
    clone3: 435,
    abiLimit: null,
  },
};

type Target = "allow" | "eperm" | "enosys" | "next";
type Insn =
  | { op: "ld"; off: number }
  | { op: "jeq" | "jge" | "jset"; k: number; yes: Target; no: Target }
  | { op: "ret"; value: number; label: "allow" | "eperm" | "enosys" };

/**
 * Build the filter for `arch` as the raw `struct sock_filter[]` bytes that
 * `bwrap --seccomp FD` reads.
 *
 * @example
 * ```ts
 * const bytes = noProcessFilter("x86_64");
 * console.assert(bytes.length % 8 === 0);
 * ```
 */
export function noProcessFilter(arch: SeccompArch): Uint8Array {
  const a = ARCHES[arch];
  const body: Insn[] = [
    { op: "ld", off: OFF_ARCH },
    { op: "jeq", k: a.audit, yes: "next", no: "eperm" },
    { op: "ld", off: OFF_NR },
  ];
  if (a.abiLimit !== null) {
    body.push({ op: "jge", k: a.abiLimit, yes: "eperm", no: "next" });
  }
  for (const nr of a.fork) {
    body.push({ op: "jeq", k: nr, yes: "eperm", no: "next" });
  }
  body.push({ op: "jeq", k: a.clone3, yes: "enosys", no: "next" });
  body.push({ op: "jeq", k: a.clone, yes: "next", no: "allow" });
  body.push({ op: "ld", off: OFF_ARG0_LOW });
  body.push({ op: "jset", k: CLONE_THREAD, yes: "allow", no: "eperm" });
  const tail: Insn[] = [
    { op: "ret", value: SECCOMP_RET_ALLOW, label: "allow" },
    { op: "ret", value: SECCOMP_RET_ERRNO | EPERM, label: "eperm" },
    { op: "ret", value: SECCOMP_RET_ERRNO | ENOSYS, label: "enosys" },
  ];
  const prog = [...body, ...tail];
  const at = (label: string): number =>
    prog.findIndex((i) => i.op === "ret" && i.label === label);
  const out = new Uint8Array(prog.length * 8);
  const view = new DataView(out.buffer);
  prog.forEach((insn, i) => {
    let code: number, jt = 0, jf = 0, k: number;
    if (insn.op === "ld") {
      code = BPF_LD_W_ABS;
      k = insn.off;
    } else if (insn.op === "ret") {
      code = BPF_RET_K;
      k = insn.value;
    } else {
      code = insn.op === "jeq"
        ? BPF_JMP_JEQ_K
        : insn.op === "jge"
        ? BPF_JMP_JGE_K
        : BPF_JMP_JSET_K;
      k = insn.k;
      const rel = (t: Target): number => {
        if (t === "next") return 0;
        const off = at(t) - (i + 1);
        if (off < 0 || off > 255) {
          throw new RangeError(`seccomp jump out of range at ${i}`);
        }
        return off;
      };
      jt = rel(insn.yes);
      jf = rel(insn.no);
    }
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k >>> 0, true);
  });
  return out;
}

/** The seccomp architecture for a Deno `build.arch`, or null when unsupported. */
export function seccompArch(arch: string): SeccompArch | null {
  return arch === "x86_64" || arch === "aarch64" ? arch : null;
}

/**
 * The sandbox's own error: a launch that cannot be made safely, e.g.
 * bubblewrap missing while required, or the deno backend asked to run
 * something that is not `deno run`. Bad input: exit code 2.
 *
 * @module
 */
import { InputError } from "../errors.ts";

/** A launch that cannot be made as asked; the message names the value at fault. */
export class SandboxError extends InputError {
  override name = "SandboxError";
}

/**
 * The number generator: candidates, name hints, then a value inside the
 * bounds that honours `multipleOf`. Private to lib/reality/.
 *
 * @module
 */
import type { Prng } from "./prng.ts";
import { hintValues, matchNameHint } from "./name_hints.ts";
import {
  type Ctx,
  type Gen,
  leaf,
  primitiveOk,
  type Schema,
  type SourceKind,
  Unsatisfiable,
} from "./_generate_context.ts";

export function genNumber(
  s: Schema,
  path: string,
  name: string | null,
  ctx: Ctx,
  prng: Prng,
  integer: boolean,
): Gen {
  // Bounds (draft-06 and later: exclusive bounds are numbers).
  let lo = typeof s.minimum === "number" ? s.minimum : -Infinity;
  let hi = typeof s.maximum === "number" ? s.maximum : Infinity;
  let loEx = false;
  let hiEx = false;
  if (typeof s.exclusiveMinimum === "number" && s.exclusiveMinimum >= lo) {
    [lo, loEx] = [s.exclusiveMinimum, true];
  }
  if (typeof s.exclusiveMaximum === "number" && s.exclusiveMaximum <= hi) {
    [hi, hiEx] = [s.exclusiveMaximum, true];
  }
  const bounds = `${loEx ? "(" : "["}${lo}, ${hi}${hiEx ? ")" : "]"}`;
  if (lo > hi || (lo === hi && (loEx || hiEx))) {
    throw new Unsatisfiable(path, `empty range ${bounds}`);
  }

  const m = name === null
    ? null
    : matchNameHint(name, integer ? "integer" : "number");
  if (m) {
    for (const v of hintValues(m.hint, integer ? "integer" : "number")) {
      if (primitiveOk(s, v, ctx)) {
        return leaf(path, v, "name_hint", `hint ${m.hint.label} (${name})`);
      }
    }
  }
  const step = typeof s.multipleOf === "number" && s.multipleOf > 0
    ? s.multipleOf
    : null;
  // The window to draw from: the declared bounds, or a realistic 1..100.
  let wlo: number;
  let whi: number;
  if (Number.isFinite(lo) && Number.isFinite(hi)) [wlo, whi] = [lo, hi];
  else if (Number.isFinite(lo)) [wlo, whi] = [lo, Math.max(lo, 0) + 99];
  else if (Number.isFinite(hi)) {
    [wlo, whi] = [hi >= 1 ? Math.min(1, hi) : hi - 99, hi];
  } else [wlo, whi] = [1, 100];
  const detail = Number.isFinite(lo) || Number.isFinite(hi)
    ? `within ${bounds}`
    : "1..100";
  const source: SourceKind = Number.isFinite(lo) || Number.isFinite(hi)
    ? "bounds"
    : "type";

  const unit = step ?? 1;
  const kLo = Math.ceil(wlo / unit - 1e-9) +
    (loEx && Number.isInteger(wlo / unit) ? 1 : 0);
  const kHi = Math.floor(whi / unit + 1e-9) -
    (hiEx && Number.isInteger(whi / unit) ? 1 : 0);
  const wide = whi - wlo >= 10 || integer || step !== null;
  if (kLo <= kHi && wide) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const k = prng.int(kLo, Math.min(kHi, kLo + 1_000_000));
      const v = step === null ? k : Number((k * step).toPrecision(12));
      if (primitiveOk(s, v, ctx)) return leaf(path, v, source, detail);
    }
  }
  if (!integer && step === null) {
    // A narrow real range: a value with two decimals strictly inside it.
    for (let attempt = 0; attempt < 10; attempt++) {
      const v = Number(
        (wlo + (whi - wlo) * (0.1 + 0.8 * prng.next())).toFixed(2),
      );
      if (primitiveOk(s, v, ctx)) return leaf(path, v, source, detail);
    }
    const mid = (wlo + whi) / 2;
    if (primitiveOk(s, mid, ctx)) return leaf(path, mid, source, detail);
  }
  const what = integer ? "integer" : "number";
  throw new Unsatisfiable(
    path,
    `no ${what}${step !== null ? ` multiple of ${step}` : ""} in ${bounds}`,
  );
}

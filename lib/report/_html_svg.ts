/**
 * The timelines of the concurrent attempts in the HTML report, as inline
 * SVG (no scripts, no external assets): both calls' send and receive on
 * the overlap timer's clock, the overlap shaded, diverged attempts marked.
 * Pure. Private to lib/report/.
 *
 * @module
 */
import { clip, escapeMarkup as h } from "./_markup.ts";
import { arr, type Json, obj, str } from "./_html_parts.ts";

const C_CALL1 = "#0969da";
const C_CALL2 = "#8250df";
const C_OVERLAP = "#54aeff";
const C_LOST = "#cf222e";

/** A number for an SVG attribute: finite, two decimals. */
function n(x: number): string {
  return Number.isFinite(x) ? String(Math.round(x * 100) / 100) : "0";
}

/** An axis label: whole milliseconds, or one decimal below 10 ms. */
function tick(ms: number): string {
  return ms >= 10 ? String(Math.round(ms)) : String(Math.round(ms * 10) / 10);
}

/** A round axis step: at most five steps cover `ms`. */
function niceStep(ms: number): number {
  if (!(ms > 0)) return 1;
  const raw = ms / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((v) => v >= raw) ?? 10 * p;
}

function legend(color: string, text: string): string {
  return `<span class="legend" style="background:${color}"></span>${h(text)}`;
}

interface Span {
  send: number;
  receive: number | null;
}

/** The two calls of one attempt from its timer timeline (ms). */
function spans(timeline: unknown): { opened: number | null; calls: Span[] } {
  const t = new Map<string, number>();
  for (const e of arr(timeline)) {
    const o = obj(e);
    if (typeof o.event === "string" && typeof o.t === "number") {
      t.set(o.event, o.t);
    }
  }
  const calls: Span[] = [];
  for (const i of [1, 2]) {
    const send = t.get(`send call ${i}`);
    if (send === undefined) continue;
    calls.push({ send, receive: t.get(`receive call ${i}`) ?? null });
  }
  return { opened: t.get("opened") ?? null, calls };
}

/**
 * One timeline per mode: a row per attempt, both calls as bars from send
 * to receive (relative to the attempt's first send), the interval where
 * both were in flight shaded (solid when the timer counted the overlap,
 * pale when it did not), diverged attempts marked in red. Empty when no
 * attempt has a timeline.
 */
export function attemptTimelines(attempts: unknown[]): string {
  const byMode = new Map<string, Json[]>();
  for (const a of attempts) {
    const o = obj(a);
    if (spans(o.timeline).calls.length === 0) continue;
    const mode = str(o.mode);
    byMode.set(mode, [...(byMode.get(mode) ?? []), o]);
  }
  return [...byMode].map(([mode, rows]) => timeline(mode, rows)).join("");
}

function timeline(mode: string, rows: Json[]): string {
  const W = 640, LEFT = 44, RIGHT = 76, ROW = 18, TOP = 2, AXIS = 22;
  const plot = W - LEFT - RIGHT;
  const data = rows.map((o) => {
    const s = spans(o.timeline);
    const t0 = Math.min(...s.calls.map((c) => c.send));
    return { o, t0, calls: s.calls };
  });
  let span = 0;
  for (const d of data) {
    for (const c of d.calls) {
      span = Math.max(span, (c.receive ?? c.send) - d.t0);
    }
  }
  const step = niceStep(span);
  span = Math.max(1, Math.ceil(span / step - 1e-9)) * step;
  const x = (ms: number) => LEFT + (ms / span) * plot;
  const H = TOP + rows.length * ROW + AXIS;
  const parts: string[] = [];
  data.forEach((d, r) => {
    const y = TOP + r * ROW;
    const diverged = d.o.diverged === true;
    const counted = d.o.overlap === true;
    if (r % 2 === 1) {
      parts.push(
        `<rect x="0" y="${y}" width="${W}" height="${ROW}" fill="#f6f8fa"/>`,
      );
    }
    const [a, b] = d.calls;
    if (a && b && a.receive !== null && b.receive !== null) {
      const from = Math.max(a.send, b.send) - d.t0;
      const to = Math.min(a.receive, b.receive) - d.t0;
      if (to > from) {
        parts.push(
          `<rect x="${n(x(from))}" y="${y + 1}" width="${
            n(Math.max(1, x(to) - x(from)))
          }" height="${ROW - 2}" fill="${C_OVERLAP}" opacity="${
            counted ? ".55" : ".22"
          }"><title>both calls in flight for ${n(to - from)} ms${
            counted ? "" : " (not counted as overlap by the timer)"
          }</title></rect>`,
        );
      }
    }
    d.calls.forEach((c, i) => {
      const cy = y + 3 + i * 7;
      const color = i === 0 ? C_CALL1 : C_CALL2;
      const end = c.receive === null ? span : c.receive - d.t0;
      parts.push(
        `<rect x="${n(x(c.send - d.t0))}" y="${cy}" width="${
          n(Math.max(1.5, x(end) - x(c.send - d.t0)))
        }" height="5" rx="1" fill="${color}"${
          c.receive === null ? ` opacity=".4"` : ""
        }><title>call ${i + 1}: sent at ${n(c.send - d.t0)} ms, ${
          c.receive === null
            ? "no answer"
            : `answered at ${n(c.receive - d.t0)} ms`
        }</title></rect>`,
      );
    });
    parts.push(
      `<text x="4" y="${y + 12.5}" class="lbl">#${h(str(d.o.attempt))}</text>`,
    );
    const tag = diverged
      ? `<text x="${W - RIGHT + 6}" y="${y + 12.5}" class="bad">diverged</text>`
      : counted
      ? `<text x="${W - RIGHT + 6}" y="${y + 12.5}" class="lbl">overlap</text>`
      : "";
    parts.push(tag);
    if (diverged) {
      parts.push(
        `<rect x="${LEFT - 4}" y="${y + 1}" width="3" height="${
          ROW - 2
        }" fill="${C_LOST}"/>`,
      );
    }
    parts.push(
      `<rect x="0" y="${y}" width="${W}" height="${ROW}" fill="transparent"><title>${
        h(
          clip(
            `attempt ${str(d.o.attempt)}: ${
              diverged ? "diverged from one call" : "same state as one call"
            }; ${str(d.o.overlapDetail)}`,
            300,
          ),
        )
      }</title></rect>`,
    );
  });
  const axisY = TOP + rows.length * ROW + 4;
  const fractions = Array.from(
    { length: Math.round(span / step) + 1 },
    (_, k) => (k * step) / span,
  );
  const ticks = fractions.map((f) =>
    `<line x1="${n(LEFT + f * plot)}" y1="${axisY}" x2="${
      n(LEFT + f * plot)
    }" y2="${axisY + 4}" stroke="#8c959f"/><text x="${n(LEFT + f * plot)}" y="${
      axisY + 15
    }" text-anchor="${f === 1 ? "end" : "middle"}" class="lbl">${
      tick(f * span)
    }${f === 1 ? " ms" : ""}</text>`
  ).join("");
  const diverged = rows.filter((o) => o.diverged === true).length;
  const overlapped = rows.filter((o) => o.overlap === true).length;
  return `<figure class="pic"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${
    h(
      `${mode}: ${rows.length} attempts, ${overlapped} overlapped, ${diverged} diverged`,
    )
  }">${parts.join("")}<line x1="${LEFT}" y1="${axisY}" x2="${
    LEFT + plot
  }" y2="${axisY}" stroke="#8c959f"/>${ticks}</svg><figcaption>${
    h(mode)
  }: ${rows.length} attempts, ${overlapped} overlapped, ${diverged} diverged · ${
    legend(C_CALL1, "call 1")
  }${legend(C_CALL2, "call 2")}${
    legend(C_OVERLAP, "both in flight")
  } · times from each attempt's first send, on the overlap timer's clock</figcaption></figure>`;
}

/**
 * Small building blocks of the HTML report: the page's CSS, value
 * rendering and escaped key-value tables, badges and lists. Pure. Private
 * to lib/report/.
 *
 * @module
 */
import type { OutcomeKind } from "../verdicts/types.ts";
import { breakable, clip, escapeMarkup as h } from "./_markup.ts";

/** Longest rendering of one value (a field before/after, a description). */
export const VALUE_MAX = 300;

export const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; margin: 0; overflow-wrap: break-word; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 32px 48px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 14px 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; padding: 6px 8px; border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; max-height: 16em; overflow-y: auto; }
.sub { color: #59636e; margin: 0 0 12px; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #e6e9ed; }
th { background: #f6f8fa; font-weight: 600; font-size: 12.5px; }
table.kv th { width: 200px; background: none; color: #59636e; font-weight: 500; }
td.wrap, .wrap { overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 12px; font-size: 12px; font-weight: 600; }
.k-PASS, .ok { background: #dafbe1; color: #116329; }
.k-VIOLATION, .bad { background: #ffebe9; color: #a40e26; }
.k-INCONCLUSIVE, .warn { background: #fff8c5; color: #7d4e00; }
.k-NOT_APPLICABLE { background: #eff2f5; color: #424a53; }
.muted { color: #59636e; }
.note { color: #59636e; font-size: 12.5px; margin: 4px 0; }
.headline { font-size: 16px; margin: 8px 0; }
.finding { border: 1px solid #d0d7de; border-left: 4px solid #d4a72c; border-radius: 8px; padding: 8px 14px 10px; margin: 10px 0; }
.finding.f-violation, .finding.f-mismatch { border-left-color: #cf222e; }
.finding h3 { margin: 2px 0 4px; }
.finding p { margin: 4px 0 6px; }
.finding .io { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 8px; }
.label { color: #59636e; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; margin-top: 4px; }
details { border: 1px solid #d0d7de; border-radius: 8px; margin: 10px 0; padding: 0 12px; }
details[open] { padding-bottom: 10px; }
summary { cursor: pointer; padding: 8px 0; font-weight: 600; }
details.raw summary { font-weight: 400; color: #59636e; }
ul { margin: 4px 0; padding-left: 20px; }
li.add::marker { content: "+ "; color: #116329; }
li.rem::marker { content: "− "; color: #a40e26; }
li.chg::marker { content: "~ "; color: #7d4e00; }
.banner { border: 2px solid #cf222e; border-radius: 8px; padding: 10px 14px; margin: 12px 0; background: #ffebe9; }
.banner strong { color: #a40e26; }
.banner.warn-banner { border-color: #d4a72c; background: #fff8c5; }
.banner.warn-banner strong { color: #7d4e00; }
.matrix-wrap { overflow-x: auto; }
table.matrix { table-layout: fixed; min-width: 620px; }
table.matrix th.tcol { width: 21%; }
table.matrix td { padding: 2px; border-bottom: 1px solid #eef0f2; }
table.matrix td.tname { padding: 4px 8px; }
table.matrix td.cell a { display: block; color: inherit; text-decoration: none; border-radius: 6px; padding: 2px 6px; }
table.matrix .o { display: block; font-weight: 600; font-size: 12px; }
table.matrix .ob { display: block; font-size: 11.5px; opacity: .85; }
td.cell.c-PASS a { background: #dafbe1; color: #116329; }
td.cell.c-VIOLATION a { background: #ffd8d3; color: #82071e; box-shadow: inset 0 0 0 1px #cf222e; }
td.cell.c-INCONCLUSIVE a { background: #fff8c5; color: #7d4e00; }
td.cell.c-NOT_APPLICABLE a { color: #8c959f; }
td.cell.c-NOT_APPLICABLE .o { font-weight: 400; }
td.cell.mismatch a { box-shadow: inset 0 0 0 2px #cf222e; }
td.cell.none { color: #8c959f; text-align: center; }
figure.pic { margin: 8px 0 12px; overflow-x: auto; max-width: 100%; }
figure.pic svg { display: block; max-width: 100%; height: auto; }
figure.pic figcaption { color: #59636e; font-size: 12px; margin-top: 2px; }
svg text { font: 10.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; fill: #424a53; }
svg text.lbl { fill: #59636e; }
svg text.bad { fill: #a40e26; font-weight: 600; }
.legend { display: inline-block; width: 10px; height: 10px; border-radius: 2px; vertical-align: -1px; margin: 0 3px 0 8px; }
footer { margin-top: 40px; color: #59636e; font-size: 12px; }
@media (max-width: 900px) { main { padding: 16px; } }
@media print { details { break-inside: avoid; } }
`;

export type Json = Record<string, unknown>;

export function obj(v: unknown): Json {
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? v as Json
    : {};
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v);
}

export function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  return clip(JSON.stringify(v) ?? String(v), VALUE_MAX);
}

export function badge(kind: OutcomeKind | string, text: string): string {
  return `<span class="badge k-${h(kind)}">${breakable(text)}</span>`;
}

export function flag(good: boolean | null, yes: string, no: string): string {
  if (good === null) return `<span class="badge warn">unknown</span>`;
  return good
    ? `<span class="badge ok">${h(yes)}</span>`
    : `<span class="badge bad">${h(no)}</span>`;
}

export function kv(rows: [string, string][]): string {
  return `<table class="kv">${
    rows.map(([k, v]) => `<tr><th>${h(k)}</th><td class="wrap">${v}</td></tr>`)
      .join("")
  }</table>`;
}

export function list(items: string[], cls = ""): string {
  if (items.length === 0) return "";
  return `<ul>${
    items.map((i) => `<li${cls ? ` class="${cls}"` : ""}>${i}</li>`).join("")
  }</ul>`;
}

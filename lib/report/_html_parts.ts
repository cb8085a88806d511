/**
 * Small building blocks of the HTML report: the page's CSS, value
 * rendering and escaped key-value tables, badges and lists. Pure. Private
 * to lib/report/.
 *
 * @module
 */
import type { OutcomeKind } from "../verdicts/types.ts";
import { clip, escapeMarkup as h } from "./_markup.ts";

/** Longest rendering of one value (a field before/after, a description). */
export const VALUE_MAX = 300;

export const CSS = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1280px; margin: 0 auto; padding: 24px 32px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 16px 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; padding: 8px 10px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: 6px 0; }
.sub { color: #59636e; margin: 0 0 16px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid #d0d7de; border-radius: 8px; padding: 10px 14px; min-width: 130px; }
.card .n { font-size: 22px; font-weight: 600; }
.card .l { color: #59636e; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; }
th, td { text-align: left; vertical-align: top; padding: 5px 8px; border-bottom: 1px solid #e6e9ed; }
th { background: #f6f8fa; font-weight: 600; font-size: 12.5px; }
table.kv th { width: 220px; background: none; color: #59636e; font-weight: 500; }
td.wrap { word-break: break-all; }
td { overflow-wrap: anywhere; }
td .badge { white-space: normal; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 12px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.k-PASS { background: #dafbe1; color: #116329; }
.k-VIOLATION { background: #ffebe9; color: #a40e26; }
.k-INCONCLUSIVE { background: #fff8c5; color: #7d4e00; }
.k-NOT_APPLICABLE { background: #eff2f5; color: #424a53; }
.ok { background: #dafbe1; color: #116329; }
.bad { background: #ffebe9; color: #a40e26; }
.warn { background: #fff8c5; color: #7d4e00; }
.muted { color: #59636e; }
.note { color: #59636e; font-size: 12.5px; padding-left: 8px; }
tr.row-VIOLATION td:first-child { box-shadow: inset 3px 0 #cf222e; }
tr.row-INCONCLUSIVE td:first-child { box-shadow: inset 3px 0 #d4a72c; }
tr.mismatch td:first-child { box-shadow: inset 3px 0 #cf222e; }
details { border: 1px solid #d0d7de; border-radius: 8px; margin: 10px 0; padding: 0 12px; }
details[open] { padding-bottom: 10px; }
summary { cursor: pointer; padding: 8px 0; font-weight: 600; }
ul { margin: 4px 0; padding-left: 20px; }
li.add::marker { content: "+ "; color: #116329; }
li.rem::marker { content: "− "; color: #a40e26; }
li.chg::marker { content: "~ "; color: #7d4e00; }
.banner { border: 2px solid #cf222e; border-radius: 8px; padding: 10px 14px; margin: 16px 0; background: #ffebe9; color: #1f2328; }
.banner strong { color: #a40e26; }
footer { margin-top: 40px; color: #59636e; font-size: 12px; }
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
  return `<span class="badge k-${h(kind)}">${h(text)}</span>`;
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

export function declaredText(state: string): string {
  return state === "TRUE"
    ? "true"
    : state === "FALSE"
    ? "false"
    : state.toLowerCase();
}

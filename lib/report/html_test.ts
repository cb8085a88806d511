import assert from "node:assert/strict";
import { renderHtml } from "./html.ts";
import {
  EVIL_TOOL,
  syntheticLearned,
  syntheticReport,
} from "../../tests/_synthetic_report.ts";
import type { Report } from "./report.ts";
import { toolLabel } from "./_markup.ts";

function count(haystack: string, needle: string | RegExp): number {
  return haystack.split(needle).length - 1;
}

Deno.test("html: one self-contained page: no scripts, no external assets, a CSP that forbids both", () => {
  const page = renderHtml(syntheticReport());
  assert.ok(page.startsWith("<!DOCTYPE html>"));
  assert.equal(count(page, /<script/i), 0);
  assert.equal(count(page, /<link/i), 0);
  assert.equal(count(page, /<[^>]*\ssrc=/i), 0);
  assert.equal(count(page, /url\(/i), 0);
  assert.equal(count(page, "<style>"), 1);
  // Every link is an anchor inside the page.
  for (const m of page.matchAll(/href="([^"]*)"/g)) {
    assert.match(m[1]!, /^#v\d+$/);
  }
  assert.match(
    page,
    /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'/,
  );
});

Deno.test("html: server-provided strings are escaped everywhere (names, descriptions, deltas, details)", () => {
  const report: Report = syntheticReport();
  report.verdicts[0]!.details.push(`</td></tr><script>alert(2)</script>`);
  const page = renderHtml(report);
  assert.equal(count(page, /<script/i), 0);
  assert.equal(count(page, /<img/i), 0);
  assert.ok(!page.includes(EVIL_TOOL), "the raw tool name never appears");
  const escapedName = "evil&lt;&amp;&quot;&#39;&gt;";
  // finding card, grid, details summary, declared tools table
  assert.ok(count(page, escapedName) >= 4, "the tool is still shown");
  // the description and the delta's new value, escaped
  assert.match(page, /Reads items\. &lt;script&gt;alert\(&quot;owned&quot;\)/);
  assert.match(
    page,
    /name: &quot;apple&quot; → &quot;&lt;script&gt;alert\(\\&quot;owned\\&quot;\)/,
  );
  assert.match(page, /&lt;\/td&gt;&lt;\/tr&gt;&lt;script&gt;alert\(2\)/);
  // the server's name
  assert.match(page, /demo&lt;server&gt; 1\.0/);
  // unknown evidence is shown as escaped JSON
  // unknown evidence is raw JSON behind a disclosure, escaped
  assert.match(
    page,
    /<details class="raw"><summary>oddity \(raw JSON\)<\/summary><pre>&quot;&lt;script&gt;/,
  );
});

Deno.test("html: findings first: one card per violation, untested claim and unmet expectation, before the grid", () => {
  const report = syntheticReport();
  const page = renderHtml(report);
  const cards = [
    ...page.matchAll(
      /<article class="finding f-([a-z]+)"><h3><span class="mono">([^<]*)<\/span> ([a-z ]+) /g,
    ),
  ]
    .map((m) => `${m[1]} ${m[2]} ${m[3]}`);
  assert.deepEqual(cards, [
    "violation evil&lt;&amp;&quot;&#39;&gt; read only",
    "violation writer[again] concurrent idempotence",
    "mismatch writer[again] sequential idempotence",
    "mismatch ghost read only",
  ]);
  const findingsAt = page.indexOf('id="findings"');
  assert.ok(findingsAt > page.indexOf('id="claims"'));
  assert.ok(findingsAt < page.indexOf('<table class="matrix">'));
  // the declared hint, the outcome and what happened, in one sentence
  assert.match(
    page,
    /<span class="badge k-VIOLATION">VIOLATION<\/span> <code>readOnlyHint: true<\/code><\/h3><p>Calling evil&lt;&amp;&quot;&#39;&gt; overwrote state\.db:items \[1\] \(name: &quot;apple&quot; → &quot;&lt;script&gt;/,
  );
  assert.match(page, /beyond one call, in 2\/2 attempts\./);
  assert.match(page, /Expected PASS, got INCONCLUSIVE:PARTIAL_COVERAGE/);
  // each card links to its verdict's evidence, and shows the state change
  assert.match(page, /<div class="label">state change<\/div>/);
  assert.match(page, /<a href="#v0">all evidence<\/a><\/article>/);
  // the headline and over-declarations lead; no count cards, no second table
  assert.match(page, /<strong>claims:<\/strong> /);
  assert.ok(!page.includes('class="cards"'));
  assert.ok(!page.includes("<h2>Verdicts</h2>"));
  assert.match(page, /MISMATCH<\/span> <span class="note">expected PASS/);
  // expectations: the count leads, the orphan one (no verdict) is a card
  assert.match(page, /<strong>expectations:<\/strong> 3\/5 matched/);
  assert.ok(!page.includes("<h2>Expectations</h2>"), "no second table");
  // Violations and mismatches are open; the rest folded.
  assert.equal(count(page, /<details id="v\d+" open>/g), 3);
  // no empty rows in the details
  assert.ok(!page.includes("<th>reason</th>"));
  assert.ok(!page.includes("<th>secondary reasons</th>"));
});

Deno.test("html: a finding shows the request sent and the server's answer, bounded and escaped", () => {
  const report: Report = syntheticReport();
  const hint = { state: "ABSENT", detail: null };
  report.observations.tools.push(
    {
      tool: "evil<&\"'>",
      variant: null,
      arguments: { id: "<b>1</b>" },
      hints: {
        readOnlyHint: { state: "TRUE", detail: null },
        destructiveHint: hint,
        idempotentHint: hint,
        openWorldHint: hint,
      },
    } as unknown as Report["observations"]["tools"][number],
  );
  report.sessions.push(
    {
      id: "once-1",
      kind: "once",
      tool: "evil<&\"'>",
      run: 1,
      callResponses: [
        `{"content":[{"type":"text","text":"<img src=x>${"x".repeat(5000)}"}]}`,
      ],
    } as unknown as Report["sessions"][number],
  );
  const page = renderHtml(report);
  assert.match(
    page,
    /<div class="label">request<\/div><pre>\{&quot;name&quot;:&quot;evil&lt;&amp;\\&quot;&#39;&gt;&quot;,&quot;arguments&quot;:\{&quot;id&quot;:&quot;&lt;b&gt;1&lt;\/b&gt;&quot;\}\}<\/pre>/,
  );
  const answer = /<div class="label">answer<\/div><pre>([^<]*)<\/pre>/.exec(
    page,
  );
  assert.ok(answer, "the answer is shown");
  assert.match(answer[1]!, /^\{&quot;content&quot;.*&lt;img src=x&gt;x+…$/);
  assert.ok(answer[1]!.length < 1600, "bounded");
  assert.ok(!page.includes("<img"));
});

Deno.test("html: provenance, reset, coverage, control, concurrent attempt counts and deltas", () => {
  const page = renderHtml(syntheticReport());
  for (
    const s of [
      "20261130T000000000Z-demo",
      `sha256:${"d".repeat(64)}`,
      "verity 0.1.0",
      "c0ffee",
      "2026-11-30T00:00:00.000Z",
    ]
  ) {
    assert.ok(page.includes(s), `provenance shows ${s}`);
  }
  assert.match(page, /<span class="badge ok">verified<\/span>/);
  assert.match(page, /both resets: sha256:a{64}/);
  assert.match(page, /<span class="badge bad">partial<\/span>/);
  assert.match(
    page,
    /sqlite:cache\.db<\/span> <span class="badge bad">not observed/,
  );
  assert.match(page, /<span class="badge ok">stable<\/span>/);
  // attempt counts in the details
  assert.match(
    page,
    /<tr><td>two_process<\/td><td>3<\/td><td>2<\/td><td>1<\/td><td>1<\/td><\/tr>/,
  );
  // attempts with the same divergence are grouped, runs with the same delta too
  assert.match(page, /two_process 1, two_process 2<\/td>/);
  assert.match(page, /state\.db:items \[9\]<\/span> added/);
  assert.match(page, /<tr><td>1, 2, 3<\/td>/);
  assert.match(page, /business \(lossy\)/);
  assert.match(page, /<span class="badge bad">lossy<\/span>/);
  // declared tools, with the malformed hint and outputSchema
  assert.match(page, /<h2>Declared tools<\/h2>/);
  assert.match(page, /malformed<div class="note">string: &quot;no&quot;/);
  assert.match(
    page,
    /listed but not exercised: <span class="mono">unused_tool/,
  );
});

Deno.test("html: an audit report has no expectations, a card per violation and its over-declarations", () => {
  const page = renderHtml(syntheticReport({ audit: true }));
  assert.ok(!page.includes("<h2>Expectations</h2>"));
  assert.equal(count(page, '<article class="finding f-violation">'), 2);
  assert.equal(count(page, '<article class="finding f-mismatch">'), 0);
  assert.match(
    page,
    /<strong>over-declared \(behaved more safely than declared\):<\/strong> writer destructiveHint \(argument sets: again\)/,
  );
});

Deno.test("html: a report with odd evidence and an unreadable listing still renders", () => {
  const report: Report = syntheticReport();
  report.protocol.toolsList = ["not json"];
  report.verdicts[0]!.evidence = {
    control_vs_once: [{ run: 1, delta: "weird" }, null],
    counts: 7,
    attempts: [null],
  };
  const page = renderHtml(report);
  assert.match(page, /page 0:/);
  assert.match(page, /no change/);
  assert.ok(page.trimEnd().endsWith("</html>"));
});

Deno.test("html: a real report (liar-readonly) shows its violation and the access_log row", async () => {
  const report = JSON.parse(
    await Deno.readTextFile(
      new URL("../../tests/data/report/small_report.json", import.meta.url),
    ),
  ) as Report;
  const page = renderHtml(report);
  assert.match(page, /verity report: liar-readonly/);
  assert.match(page, /<span class="badge k-VIOLATION">VIOLATION<\/span>/);
  assert.match(page, /state\.db:access_log \[2\]<\/span> added/);
  assert.match(page, /<strong>expectations:<\/strong> 5\/5 matched/);
});

Deno.test("html: process-memory evidence is a table of escaped answers; no setup banner on a run that ran", () => {
  const report: Report = syntheticReport();
  report.verdicts[0]!.evidence = {
    process_memory: [{
      run: 1,
      first: "<b>Started</b> logging",
      second: "Stopped logging",
    }],
  };
  const page = renderHtml(report);
  assert.match(page, /state may live in process memory/);
  assert.match(page, /&lt;b&gt;Started&lt;\/b&gt; logging/);
  assert.ok(!page.includes("<b>Started</b>"));
  assert.ok(!page.includes('id="setup-failed"'));
  report.setupFailure = "the server never started: <script>";
  const failed = renderHtml(report);
  const at = failed.indexOf('id="setup-failed"');
  assert.ok(at > 0 && at < failed.indexOf('id="findings"'));
  assert.match(failed, /never started: &lt;script&gt;/);
});

Deno.test("html: the tool x test grid: one row per tool and variant, five test columns, cells link to evidence", () => {
  const report = syntheticReport();
  const page = renderHtml(report);
  const matrixAt = page.indexOf('<table class="matrix">');
  assert.ok(matrixAt > 0 && matrixAt < page.indexOf("<h2>Provenance</h2>"));
  const matrix = page.slice(matrixAt, page.indexOf("</table>", matrixAt));
  assert.equal(count(matrix, /<th>/g), 5, "five test columns");
  assert.match(matrix, /<th>sequential idempotence<\/th>/);
  const labels = [...new Set(report.verdicts.map((v) => toolLabel(v)))];
  assert.equal(count(matrix, /<tr class="tool">/g), labels.length);
  // every verdict is one cell linking to its details, coloured by its kind
  report.verdicts.forEach((v, i) => {
    assert.match(
      matrix,
      new RegExp(`<td class="cell c-${v.kind}( mismatch)?"><a href="#v${i}"`),
    );
  });
  // a VIOLATION cell names the declared value; INCONCLUSIVE its reason
  assert.match(
    matrix,
    /<span class="o">VIOLATION<\/span><span class="ob">declared true<\/span>/,
  );
  assert.match(
    matrix,
    /<td class="cell c-INCONCLUSIVE mismatch"><a href="#v\d+"><span class="o">INCONCLUSIVE<\/span><span class="ob">partial coverage<\/span>/,
  );
  assert.match(matrix, /<td class="cell none">–<\/td>/);
  assert.match(
    matrix,
    /<span class="o">n\/a<\/span><span class="ob">declared [a-z]+(, over-declared)?<\/span>/,
  );
  assert.ok(!page.includes("filter-radio"), "no filter: the findings lead");
});

Deno.test("html: banners for a run that failed: setup, reset not verified, coverage partial; none for a sound run", () => {
  const partial = renderHtml(syntheticReport());
  assert.ok(!partial.includes('id="setup-failed"'));
  assert.ok(!partial.includes('id="reset-failed"'));
  assert.match(
    partial,
    /id="coverage-partial"[^>]*><strong>COVERAGE PARTIAL:<\/strong> declared state not observed: <span class="mono">sqlite:cache\.db/,
  );

  const failed = syntheticReport();
  failed.setupFailure = "the server exited before initialize: <boom>";
  const fp = renderHtml(failed);
  assert.match(fp, /id="setup-failed" role="alert"><strong>SETUP FAILED/);
  assert.match(
    fp,
    /<pre>the server exited before initialize: &lt;boom&gt;<\/pre>/,
  );
  assert.ok(fp.indexOf('id="setup-failed"') < fp.indexOf('class="matrix"'));
  assert.ok(!fp.includes('id="coverage-partial"'), "one cause, one banner");

  const reset = syntheticReport();
  reset.observations.definition.reset = {
    verified: false,
    digests: ["sha256:1", "sha256:2"],
    problem: "two resets differ",
  };
  assert.match(
    renderHtml(reset),
    /id="reset-failed"[^>]*><strong>RESET NOT VERIFIED:.*<pre>two resets differ<\/pre>/,
  );

  const sound = syntheticReport();
  sound.observations.definition.coverage.complete = true;
  sound.observations.definition.coverage.locations = sound.observations
    .definition.coverage.locations.map((l) => ({ ...l, observedBy: "sqlite" }));
  const sp = renderHtml(sound);
  assert.ok(!/class="banner/.test(sp), "no banner for a sound run");
});

Deno.test("html: concurrent attempts as an SVG timeline on the timer's clock: both calls, the overlap shaded, diverged attempts marked", () => {
  const page = renderHtml(syntheticReport());
  const at = page.indexOf(
    'aria-label="two_process: 2 attempts, 1 overlapped, 2 diverged"',
  );
  assert.ok(at > 0, "one timeline for the two_process attempts");
  const svg = page.slice(at, page.indexOf("</svg>", at));
  // attempt 1: calls from 0 to 122 ms and from 2 to 125 ms (first send = 0)
  assert.match(svg, /<title>call 1: sent at 0 ms, answered at 122 ms<\/title>/);
  assert.match(svg, /<title>call 2: sent at 2 ms, answered at 125 ms<\/title>/);
  // the overlap (2..122 ms) shaded solid, since the timer counted it
  assert.match(
    svg,
    /opacity="\.55"><title>both calls in flight for 120 ms<\/title>/,
  );
  // attempt 2: in sequence, call 2 never answered; no overlap band
  assert.match(svg, /<title>call 1: sent at 0 ms, answered at 10 ms<\/title>/);
  assert.match(svg, /<title>call 2: sent at 20 ms, no answer<\/title>/);
  assert.equal(count(svg, "both calls in flight"), 1);
  assert.equal(count(svg, /class="bad">diverged<\/text>/g), 2);
  assert.match(svg, /attempt 2: diverged from one call; calls did not overlap/);
  // the axis spans the longest attempt
  assert.match(svg, />125 ms<\/text>/);
});

Deno.test("markdown: the headline and one escaped row per finding, for a job summary", async () => {
  const { renderMarkdown } = await import("./markdown.ts");
  const md = renderMarkdown(syntheticReport({ audit: true }));
  const lines = md.split("\n");
  assert.equal(lines[0], "### verity: demo");
  assert.match(lines[2]!, /^\*\*claims:\*\* \d+ claims?: /);
  assert.equal(
    lines[4],
    "| finding | tool | test | declared | what happened |",
  );
  const rows = lines.filter((l) => l.startsWith("| VIOLATION"));
  assert.equal(rows.length, 2);
  // the tool's markup and table pipes cannot break out of the cell
  assert.match(
    rows[0]!,
    /^\| VIOLATION \| evil&lt;&amp;&quot;&#39;&gt; \| read\\_only \| readOnlyHint: true \| calling evil&lt;/,
  );
  assert.ok(!md.includes("<script"));
  for (const r of rows) assert.equal(r.split(/(?<!\\)\|/).length, 7, r);
  const clean = syntheticReport({ audit: true });
  clean.verdicts = [];
  assert.match(renderMarkdown(clean), /No violation and no untested claim\./);
});

Deno.test("html: what learning did: every argument value with its origin, escaped; none for a definition written by hand", () => {
  const report = syntheticReport({ audit: true });
  assert.ok(!renderHtml(report).includes("What learning did"));
  report.learned = syntheticLearned();
  const page = renderHtml(report);
  assert.equal(count(page, /<script/i), 0);
  assert.ok(!page.includes("\u001b") && !page.includes("\u009b"));
  assert.match(page, /<h2 id="learned">What learning did<\/h2>\n<pre>/);
  const evil = "evil&lt;&amp;&quot;&#39;&gt;";
  const value =
    "&quot;&lt;script&gt;alert(3)&lt;/script&gt;\\u001b[2J\\u{9b}&quot;";
  // the seeding call and the battery's set, each with the origin
  assert.ok(page.includes(`${evil}: kept: added 1 record(s)`));
  assert.equal(
    count(page, `id = ${value}  derived from the answer of ${evil}`),
    2,
  );
  assert.ok(page.includes("state files: notes.json (json)"));
});

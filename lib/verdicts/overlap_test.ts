import assert from "node:assert/strict";
import {
  attemptOverlap,
  decideOverlap,
  overlapFromTimeline,
  pingEvents,
} from "./overlap.ts";

Deno.test("one connection: overlap only when the second call is answered first", () => {
  assert.equal(
    decideOverlap("single_connection", [{ sendT: 0, recvT: 10 }, {
      sendT: 1,
      recvT: 4,
    }], []).overlap,
    true,
  );
  assert.equal(
    decideOverlap("single_connection", [{ sendT: 0, recvT: 4 }, {
      sendT: 1,
      recvT: 10,
    }], []).overlap,
    false,
  );
  assert.equal(
    decideOverlap("single_connection", [{ sendT: 0, recvT: null }, {
      sendT: 1,
      recvT: 4,
    }], []).detail,
    "a call was not answered",
  );
});

Deno.test("two processes: both in flight longer than the ping round trips combined", () => {
  const calls = [{ sendT: 10, recvT: 30 }, { sendT: 11, recvT: 31 }];
  assert.equal(decideOverlap("two_process", calls, [5, 5]).overlap, true); // 19 > 10
  assert.equal(decideOverlap("two_process", calls, [10, 10]).overlap, false); // 19 < 20
});

Deno.test("the decision re-derives from the stamps in a stored timeline", () => {
  const ping = (i: number, s: number, r: number) => [
    { event: pingEvents(i).send, t: s },
    { event: pingEvents(i).receive, t: r },
  ];
  const timeline = [
    { event: "opened", t: 0 },
    ...ping(1, 1, 2),
    ...ping(1, 2, 5),
    ...ping(1, 5, 6), // instance 1: 1, 3, 1 -> median 1
    ...ping(2, 6, 8),
    ...ping(2, 8, 10),
    ...ping(2, 10, 12), // instance 2: median 2
    { event: "send call 1", t: 20 },
    { event: "send call 2", t: 20.5 },
    { event: "receive call 1", t: 24 },
    { event: "receive call 2", t: 25 },
  ];
  const d = overlapFromTimeline("two_process", timeline);
  assert.deepEqual(
    d,
    decideOverlap("two_process", [{ sendT: 20, recvT: 24 }, {
      sendT: 20.5,
      recvT: 25,
    }], [1, 2]),
  );
  assert.equal(d?.overlap, true); // 3.5 ms in flight > 3 ms
  // Without ping stamps (an older report) a two-process decision cannot be re-derived.
  assert.equal(
    overlapFromTimeline(
      "two_process",
      timeline.filter((e) => !e.event.startsWith("ping")),
    ),
    null,
  );
  assert.equal(
    overlapFromTimeline("single_connection", [])?.overlap,
    undefined,
  );
});

Deno.test("attemptOverlap: decided from the stamps; a version 1 decision only where stamps are missing", () => {
  const calls = [
    { event: "send call 1", t: 0 },
    { event: "send call 2", t: 1 },
    { event: "receive call 2", t: 5 },
    { event: "receive call 1", t: 9 },
  ];
  // Stamps decide, whatever a (version 1) stored decision says.
  assert.deepEqual(
    attemptOverlap({
      mode: "single_connection",
      timeline: calls,
      overlap: false,
      overlapDetail: "stored",
    }),
    { overlap: true, detail: "second call answered 4.0 ms before the first" },
  );
  // A version 1 two-process attempt without ping stamps keeps the timer's decision.
  assert.deepEqual(
    attemptOverlap({
      mode: "two_process",
      timeline: calls,
      overlap: true,
      overlapDetail: "both in flight 4.0 ms; ping round trips combined 1.0 ms",
    }),
    {
      overlap: true,
      detail: "both in flight 4.0 ms; ping round trips combined 1.0 ms",
    },
  );
  // Version 2 without the stamps: no overlap, never assumed.
  assert.deepEqual(attemptOverlap({ mode: "two_process", timeline: calls }), {
    overlap: false,
    detail:
      "the timeline lacks the stamps to decide (overlap is never assumed)",
  });
});

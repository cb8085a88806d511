import assert from "node:assert/strict";
import { SseEventTooLarge, SseParser } from "./sse.ts";

const enc = new TextEncoder();

Deno.test("sse: events across chunks, CRLF and CR line ends, comments", () => {
  const p = new SseParser(1024);
  const out = [
    ...p.push(enc.encode(': hello\r\nid: 1\r\nevent: message\r\ndata: {"a"')),
    ...p.push(enc.encode(":1}\r\n\r\ndata: x\rdata: y\r\r")),
  ];
  assert.equal(out.length, 2);
  assert.equal(out[0]!.data, '{"a":1}');
  assert.equal(out[0]!.id, "1");
  assert.equal(out[0]!.hasId, true);
  assert.equal(out[1]!.data, "x\ny");
  assert.equal(out[1]!.id, "1", "the last event id carries over");
  assert.equal(out[1]!.hasId, false);
});

Deno.test("sse: a priming event (id and retry, empty data) is reported, not a message", () => {
  const p = new SseParser(1024);
  const [ev] = p.push(enc.encode("id: e-2\nretry: 500\ndata: \n\n"));
  assert.equal(ev!.data, "");
  assert.equal(ev!.retry, 500);
  assert.equal(p.lastEventId, "e-2");
  assert.equal(p.retry, 500);
  const [only] = p.push(enc.encode("retry: 7\n\n"));
  assert.equal(only!.hasData, false);
  assert.equal(p.retry, 7);
  assert.equal(p.push(enc.encode("retry: soon\n\n")).length, 0);
  assert.equal(p.retry, 7, "a non-numeric retry is ignored");
});

Deno.test("sse: an event over the bound throws with its head", () => {
  const p = new SseParser(100);
  assert.throws(
    () => p.push(enc.encode("data: " + "x".repeat(200))),
    (e: unknown) =>
      e instanceof SseEventTooLarge && e.head.startsWith("data: x"),
  );
});

/**
 * An incremental `text/event-stream` parser (the WHATWG algorithm), bounded
 * in bytes per event. Pure: bytes in, events out; no I/O, no clock.
 *
 * @module
 */

/** One dispatched server-sent event, exactly as the stream defined it. */
export interface SseEvent {
  /** The `event` field, or "message" when none was given. */
  event: string;
  /** The data lines joined with LF. */
  data: string;
  /** False for an event with only `id`/`retry` fields (a priming event). */
  hasData: boolean;
  /** The stream's last event id at dispatch (set by this or an earlier event). */
  id: string | null;
  /** True when this event itself carried an `id` field. */
  hasId: boolean;
  /** The `retry` field of this event in milliseconds, when it carried one. */
  retry: number | null;
  /** Bytes of the stream that made up this event (fields and comments). */
  bytes: number;
}

/**
 * Raised by {@linkcode SseParser.push} when one event outgrows the bound:
 * the bytes seen for it so far, and its first bytes (decoded leniently).
 */
export class SseEventTooLarge extends RangeError {
  constructor(limit: number, readonly seen: number, readonly head: string) {
    super(`server-sent event exceeds ${limit} bytes`);
    this.name = "SseEventTooLarge";
  }
}

const dec = new TextDecoder("utf-8");

/**
 * Feed bytes, get whole events. Lines end at CRLF, LF or CR; a blank line
 * dispatches; `:` starts a comment; unknown fields are ignored.
 *
 * @example
 * ```ts
 * import { SseParser } from "./sse.ts";
 * const p = new SseParser(1024);
 * const evs = p.push(new TextEncoder().encode("id: 7\ndata: {}\n\n"));
 * console.assert(evs[0]?.data === "{}" && evs[0]?.id === "7");
 * ```
 */
export class SseParser {
  #limit: number;
  #line: number[] = [];
  #pendingCr = false;
  #data: string[] = [];
  #event = "";
  #eventBytes = 0;
  #hasId = false;
  #retry: number | null = null;
  #firstBytes: number[] = [];
  /** The last event id of the stream (the value for `Last-Event-ID`). */
  lastEventId: string | null = null;
  /** The last `retry` the stream asked for, in milliseconds. */
  retry: number | null = null;

  constructor(maxEventBytes: number) {
    this.#limit = maxEventBytes;
  }

  /** Bytes of an event not yet dispatched (a stream cut mid-event). */
  get pendingBytes(): number {
    return this.#eventBytes + this.#line.length;
  }

  /** Parse a chunk; returns the events it completed. Throws {@linkcode SseEventTooLarge}. */
  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      if (this.#pendingCr) {
        this.#pendingCr = false;
        if (b === 0x0a) {
          this.#eventBytes++;
          continue;
        }
      }
      if (b === 0x0d || b === 0x0a) {
        if (b === 0x0d) this.#pendingCr = true;
        this.#eventBytes += this.#line.length + 1;
        const ev = this.#endLine();
        if (ev) out.push(ev);
        continue;
      }
      if (this.#firstBytes.length < 256) this.#firstBytes.push(b);
      this.#line.push(b);
      if (this.#eventBytes + this.#line.length > this.#limit) {
        throw new SseEventTooLarge(
          this.#limit,
          this.#eventBytes + this.#line.length,
          dec.decode(new Uint8Array(this.#firstBytes)),
        );
      }
    }
    return out;
  }

  #endLine(): SseEvent | null {
    const line = dec.decode(new Uint8Array(this.#line));
    this.#line = [];
    if (line === "") return this.#dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.#data.push(value);
        break;
      case "event":
        this.#event = value;
        break;
      case "id":
        if (!value.includes("\0")) {
          this.lastEventId = value;
          this.#hasId = true;
        }
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) {
          this.#retry = Number(value);
          this.retry = this.#retry;
        }
        break;
    }
    return null;
  }

  #dispatch(): SseEvent | null {
    const bytes = this.#eventBytes;
    const had = this.#data.length > 0;
    const ev: SseEvent = {
      event: this.#event === "" ? "message" : this.#event,
      data: this.#data.join("\n"),
      hasData: had,
      id: this.lastEventId,
      hasId: this.#hasId,
      retry: this.#retry,
      bytes,
    };
    this.#data = [];
    this.#event = "";
    this.#eventBytes = 0;
    this.#firstBytes = [];
    const meta = this.#hasId || this.#retry !== null;
    this.#hasId = false;
    this.#retry = null;
    // An event without data is not dispatched, but its id/retry still count:
    // report it so the caller can keep it as evidence (a priming event).
    return had || meta ? ev : null;
  }
}

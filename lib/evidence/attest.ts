/**
 * Signed attestations: an in-toto Statement v1 about one evidence document
 * (its SHA-256 as the subject), in a DSSE envelope signed with Ed25519
 * through WebCrypto. Keys are PEM: PKCS#8 for the private half, SPKI for
 * the public half. No process, clock or disk access.
 *
 * @module
 */
import { parseEvidenceJson, sha256Hex } from "./canonical.ts";

/** The in-toto Statement type (v1). */
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
/** The DSSE payload type of an in-toto statement. */
export const PAYLOAD_TYPE = "application/vnd.in-toto+json";
/** verity's predicate type. */
export const PREDICATE_TYPE = "urn:verity:evidence:v1";

/** One subject of a statement. */
export interface Subject {
  name: string;
  digest: { sha256: string };
}

/** An in-toto Statement v1. */
export interface Statement {
  _type: typeof STATEMENT_TYPE;
  subject: Subject[];
  predicateType: string;
  predicate: Record<string, unknown>;
}

/** A DSSE envelope. */
export interface Envelope {
  payloadType: string;
  /** Base64 of the statement's bytes. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

const ED25519 = { name: "Ed25519" } as const;

function fromBase64(b64: string, what: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0) {
    throw new TypeError(`${what} is not base64`);
  }
  return Uint8Array.fromBase64(b64);
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = new Uint8Array(der).toBase64();
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${
    lines.join("\n")
  }\n-----END ${label}-----\n`;
}

function unpem(label: string, text: string): Uint8Array<ArrayBuffer> {
  const m = text.match(
    new RegExp(
      `-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`,
    ),
  );
  if (!m) throw new TypeError(`not a PEM ${label} block`);
  return fromBase64(m[1]!.replace(/\s+/g, ""), `the PEM ${label} body`);
}

/**
 * DSSE's pre-authentication encoding:
 * `"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths in bytes.
 */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const enc = new TextEncoder();
  const t = enc.encode(payloadType);
  const head = enc.encode(`DSSEv1 ${t.length} ${payloadType} ${body.length} `);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/** A new Ed25519 key pair as PEM (PKCS#8 private, SPKI public). */
export async function generateKeyPair(): Promise<
  { privatePem: string; publicPem: string; keyid: string }
> {
  const k = await crypto.subtle.generateKey(ED25519, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const spki = await crypto.subtle.exportKey("spki", k.publicKey);
  return {
    privatePem: pem(
      "PRIVATE KEY",
      await crypto.subtle.exportKey("pkcs8", k.privateKey),
    ),
    publicPem: pem("PUBLIC KEY", spki),
    keyid: keyId(new Uint8Array(spki)),
  };
}

/** The key id: `sha256:` of the public key's SPKI bytes. */
export function keyId(spki: Uint8Array): string {
  return "sha256:" + sha256Hex(spki);
}

/** A signing key read from a PKCS#8 PEM; its key id comes from the public half. */
export interface SigningKey {
  key: CryptoKey;
  keyid: string;
}

/** Read a PKCS#8 PEM Ed25519 private key. Throws `TypeError` when it is not one. */
export async function importPrivateKey(text: string): Promise<SigningKey> {
  const der = unpem("PRIVATE KEY", text);
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("pkcs8", der, ED25519, true, ["sign"]);
  } catch (e) {
    throw new TypeError(`not an Ed25519 PKCS#8 key (${(e as Error).message})`);
  }
  // The public half, for the key id: export as JWK and re-import x.
  const jwk = await crypto.subtle.exportKey("jwk", key);
  const pub = await crypto.subtle.importKey(
    "jwk",
    { kty: "OKP", crv: "Ed25519", x: jwk.x! },
    ED25519,
    true,
    ["verify"],
  );
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", pub));
  return { key, keyid: keyId(spki) };
}

/** A verification key read from an SPKI PEM. */
export type VerifyingKey = SigningKey;

/** Read an SPKI PEM Ed25519 public key. Throws `TypeError` when it is not one. */
export async function importPublicKey(text: string): Promise<VerifyingKey> {
  const der = unpem("PUBLIC KEY", text);
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("spki", der, ED25519, true, ["verify"]);
  } catch (e) {
    throw new TypeError(`not an Ed25519 SPKI key (${(e as Error).message})`);
  }
  return { key, keyid: keyId(der) };
}

/** Sign a statement into a DSSE envelope. */
export async function signStatement(
  statement: Statement,
  signer: SigningKey,
): Promise<Envelope> {
  const body = new TextEncoder().encode(JSON.stringify(statement));
  const sig = await crypto.subtle.sign(
    ED25519,
    signer.key,
    pae(PAYLOAD_TYPE, body) as Uint8Array<ArrayBuffer>,
  );
  return {
    payloadType: PAYLOAD_TYPE,
    payload: body.toBase64(),
    signatures: [{ keyid: signer.keyid, sig: new Uint8Array(sig).toBase64() }],
  };
}

/** The outcome of {@linkcode verifyEnvelope}. */
export type EnvelopeVerification =
  | { ok: true; payload: Uint8Array; keyid: string }
  | { ok: false; reason: string };

/**
 * Check that one of the envelope's signatures is `key`'s over the DSSE
 * encoding of its payload. The payload is returned as bytes; parse it only
 * after this succeeds. Never throws on a malformed envelope.
 */
export async function verifyEnvelope(
  envelope: unknown,
  key: VerifyingKey,
): Promise<EnvelopeVerification> {
  if (typeof envelope !== "object" || envelope === null) {
    return { ok: false, reason: "not a DSSE envelope" };
  }
  const e = envelope as Record<string, unknown>;
  const keys = Object.keys(e).sort().join();
  if (keys !== "payload,payloadType,signatures") {
    return {
      ok: false,
      reason:
        `a DSSE envelope holds exactly payloadType, payload and signatures (found ${keys})`,
    };
  }
  if (e.payloadType !== PAYLOAD_TYPE) {
    return {
      ok: false,
      reason: `payloadType ${
        JSON.stringify(e.payloadType)
      }, expected ${PAYLOAD_TYPE}`,
    };
  }
  if (typeof e.payload !== "string" || !Array.isArray(e.signatures)) {
    return { ok: false, reason: "payload or signatures has the wrong type" };
  }
  let body: Uint8Array<ArrayBuffer>;
  try {
    body = fromBase64(e.payload, "payload");
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  const message = pae(PAYLOAD_TYPE, body) as Uint8Array<ArrayBuffer>;
  let seen = 0;
  for (const s of e.signatures) {
    if (typeof s !== "object" || s === null) continue;
    const { sig } = s as Record<string, unknown>;
    if (typeof sig !== "string") continue;
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = fromBase64(sig, "sig");
    } catch {
      continue;
    }
    seen++;
    if (await crypto.subtle.verify(ED25519, key.key, bytes, message)) {
      return { ok: true, payload: body, keyid: key.keyid };
    }
  }
  return {
    ok: false,
    reason: seen === 0
      ? "the envelope carries no signature"
      : `no signature verifies with key ${key.keyid} (wrong key, or the payload or signature was changed)`,
  };
}

/**
 * The verity statement (one subject, one of `predicateTypes`) an envelope
 * carries, once one of its signatures verifies with `key`; else why not,
 * prefixed by what failed (`signature:` or `payload:`). Never throws on a
 * malformed envelope.
 */
export async function verifiedStatement(
  envelope: unknown,
  key: VerifyingKey,
  predicateTypes: readonly string[] = [PREDICATE_TYPE],
): Promise<
  { ok: true; statement: Statement & { subject: [Subject] } } | {
    ok: false;
    reason: string;
  }
> {
  const sig = await verifyEnvelope(envelope, key);
  if (!sig.ok) return { ok: false, reason: `signature: ${sig.reason}` };
  let s: Statement;
  try {
    s = parseEvidenceJson(
      new TextDecoder("utf-8", { fatal: true }).decode(sig.payload),
    ) as Statement;
  } catch (e) {
    return {
      ok: false,
      reason: `payload: signed, but not a JSON statement (${
        (e as Error).message
      })`,
    };
  }
  if (
    s?._type !== STATEMENT_TYPE || !predicateTypes.includes(s.predicateType) ||
    !Array.isArray(s.subject) || s.subject.length !== 1
  ) {
    return {
      ok: false,
      reason: "payload: not a verity in-toto Statement v1 with one subject",
    };
  }
  return { ok: true, statement: s as Statement & { subject: [Subject] } };
}

// SkillsvcError: a failed call as the client reports it, keeping the gRPC
// code. Its own module, so the client and the archive code (tar.ts) both
// use it without importing each other.
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";

/** The canonical gRPC name of a code (NOT_FOUND), as the other clients and grpcurl print it. */
export function codeName(code: Code): string {
  if ((code as number) === 0) return "OK"; // not in Connect's enum
  if (code === Code.Canceled) return "CANCELLED"; // gRPC spells it so; Connect, Canceled
  return (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/** A failed call: the gRPC code (Connect's Code enum), the server's message, and the retry delay it asked for. */
export class SkillsvcError extends Error {
  readonly code: Code;
  /** The canonical name, e.g. NOT_FOUND. */
  readonly codeName: string;
  /** From google.rpc.RetryInfo (per-user limits), in ms. */
  readonly retryAfterMs?: number;

  constructor(code: Code, message: string, retryAfterMs?: number, cause?: unknown) {
    const name = codeName(code);
    super(`${name}: ${message}`, cause === undefined ? undefined : { cause });
    this.name = "SkillsvcError";
    this.code = code;
    this.codeName = name;
    this.retryAfterMs = retryAfterMs;
    this.rawMessage = message;
  }

  readonly rawMessage: string;

  static from(err: unknown): SkillsvcError {
    if (err instanceof SkillsvcError) return err;
    const ce = ConnectError.from(err);
    return new SkillsvcError(connectionFailure(ce) ? Code.Unavailable : ce.code, ce.rawMessage, retryAfterMs(ce), ce.cause);
  }
}

// connectionFailure tells a call that never reached the service because
// the connection failed (TLS handshake, refused or reset), which Connect's
// Node transport reports as INTERNAL: gRPC's own clients say UNAVAILABLE,
// and so do we, as the Python client does.
function connectionFailure(err: ConnectError): boolean {
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^(ERR_SSL_|ERR_TLS_|ECONNREFUSED$|ECONNRESET$|EPIPE$|ETIMEDOUT$|EHOSTUNREACH$|ENETUNREACH$|ENOTFOUND$|EAI_AGAIN$)/.test(code);
}

// RetryInfo is decoded by hand: its two fields are all we need, and the
// generated google.rpc types would be a second code generator to pin.
function retryAfterMs(err: ConnectError): number | undefined {
  for (const d of err.details) {
    if ("type" in d && d.type === "google.rpc.RetryInfo") {
      let seconds = 0n;
      let nanos = 0;
      const r = new BinaryReader(d.value);
      while (r.pos < r.len) {
        const [field, wire] = r.tag();
        if (field !== 1) {
          r.skip(wire);
          continue;
        }
        const dur = new BinaryReader(r.bytes());
        while (dur.pos < dur.len) {
          const [f, w] = dur.tag();
          if (f === 1) seconds = dur.int64() as bigint;
          else if (f === 2) nanos = dur.int32();
          else dur.skip(w);
        }
      }
      return Number(seconds) * 1000 + Math.round(nanos / 1e6);
    }
  }
  return undefined;
}

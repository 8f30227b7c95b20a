/** How the body of an HTTP/1.1 answer ends, for http1-fetch.ts (RFC 9112, section 6.3). */

/** How an answer's body ends: `feed` passes its bytes on and returns what lies past its end. */
export interface Framing {
  readonly done: boolean;
  feed(data: Buffer, body: ReadableStreamDefaultController<Uint8Array>): Buffer | undefined;
}

export class Sized implements Framing {
  constructor(private left: number) {
    if (!Number.isSafeInteger(left) || left < 0) throw new TypeError("fetch failed: a bad Content-Length");
  }
  get done() {
    return this.left === 0;
  }
  feed(data: Buffer, body: ReadableStreamDefaultController<Uint8Array>): Buffer | undefined {
    const take = Math.min(this.left, data.byteLength);
    if (take) body.enqueue(take === data.byteLength ? data : data.subarray(0, take));
    this.left -= take;
    return take === data.byteLength ? undefined : data.subarray(take);
  }
}

export class UntilClose implements Framing {
  readonly done = false;
  feed(data: Buffer, body: ReadableStreamDefaultController<Uint8Array>): undefined {
    body.enqueue(data);
  }
}

/**
 * `Transfer-Encoding: chunked` (RFC 9112, section 7.1): sizes in hex, extensions and trailers
 * skipped. Read from the bytes as they are: a streamed answer is a chunk per token or so.
 */
export class Chunked implements Framing {
  #state: "size" | "data" | "data-end" | "trailer" | "done" = "size";
  /** The start of a line whose end has not come yet. */
  #carry: Buffer | undefined;
  #left = 0;

  get done() {
    return this.#state === "done";
  }

  feed(data: Buffer, body: ReadableStreamDefaultController<Uint8Array>): Buffer | undefined {
    let at = 0;
    while (at < data.byteLength && this.#state !== "done") {
      if (this.#state === "data") {
        const take = Math.min(this.#left, data.byteLength - at);
        body.enqueue(data.subarray(at, at + take));
        at += take;
        this.#left -= take;
        if (this.#left === 0) this.#state = "data-end";
        continue;
      }
      const eol = data.indexOf(10, at); // a line ends with LF (CR LF: its CR is dropped below)
      if (eol < 0) {
        this.#carry = this.#carry ? Buffer.concat([this.#carry, data.subarray(at)]) : data.subarray(at);
        if (this.#carry.byteLength > 4096) throw new TypeError("fetch failed: a chunk's size line is too long");
        return undefined;
      }
      let line = data.subarray(at, eol);
      at = eol + 1;
      if (this.#carry) {
        line = Buffer.concat([this.#carry, line]);
        this.#carry = undefined;
      }
      const length = line.byteLength && line[line.byteLength - 1] === 13 ? line.byteLength - 1 : line.byteLength;
      if (this.#state === "data-end") {
        if (length) throw new TypeError("fetch failed: a chunk did not end where its size said");
        this.#state = "size";
      } else if (this.#state === "size") {
        let size = 0;
        let digits = 0;
        for (let digit: number; digits < length && (digit = hexDigit(line[digits]!)) >= 0; digits++) size = size * 16 + digit;
        if (!digits || digits > 12) throw new TypeError("fetch failed: a bad chunk size");
        this.#left = size;
        this.#state = size ? "data" : "trailer";
      } else if (!length) this.#state = "done"; // the trailer's end
    }
    return at < data.byteLength ? data.subarray(at) : undefined;
  }
}

const hexDigit = (c: number) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1);

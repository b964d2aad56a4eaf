import type { Socket } from "node:net";
import type { Finding } from "../errors/finding.ts";
import { createDeframer, frameMessage, maskMessage, pack, unpack, type Dictionary, type Framing, type Message } from "../protocols/iso8583/index.ts";

/**
 * One TCP connection carrying framed ISO 8583 messages, either direction. Reads are deframed
 * incrementally (partial frames, several per read) and bounded by the frame size; a frame that
 * does not unpack is reported with its MTI when one can be read, and the stream goes on. A bad
 * frame header puts the stream out of step: the connection is closed.
 */
export interface Codec {
  dictionary: Dictionary;
  framing: Framing;
  frameBytesMax: number;
}

export interface FramedSocketEvents {
  message(message: Message): void;
  malformed(error: Finding, mti: string | undefined, frameBytes: number): void;
  streamBroken(error: Finding): void;
  /** A frame that started did not finish within frameStartedTimeoutMs of reading: the socket is closed after this. */
  frameStalled?(bufferedBytes: number): void;
}

export class FramedSocket {
  private readonly deframer;
  private frameTimer: NodeJS.Timeout | undefined;

  constructor(readonly socket: Socket, readonly codec: Codec, events: FramedSocketEvents, options: { frameStartedTimeoutMs?: number } = {}) {
    this.deframer = createDeframer(codec.framing, codec.frameBytesMax);
    socket.on("data", (chunk: Buffer) => {
      const result = this.deframer.push(chunk);
      for (const frame of result.frames) {
        const unpacked = unpack(frame, codec.dictionary, { messageBytesMax: codec.frameBytesMax });
        if (unpacked.ok) events.message(unpacked.value);
        else events.malformed(unpacked.error, readableMti(frame, codec.dictionary), frame.length);
      }
      if (result.error !== undefined) {
        events.streamBroken(result.error);
        socket.destroy();
        return;
      }
      if (options.frameStartedTimeoutMs !== undefined) this.watchStartedFrame(options.frameStartedTimeoutMs, events);
    });
    socket.on("close", () => clearTimeout(this.frameTimer));
  }

  /**
   * A peer that sends half a frame and stalls holds a connection and a buffer: the frame must
   * end within the deadline. Time spent with reading paused by our own back-pressure does not count.
   */
  private watchStartedFrame(timeoutMs: number, events: FramedSocketEvents): void {
    if (this.deframer.bufferedBytes === 0) {
      clearTimeout(this.frameTimer);
      this.frameTimer = undefined;
      return;
    }
    if (this.frameTimer !== undefined) return;
    const expire = () => {
      if (this.deframer.bufferedBytes === 0 || this.socket.destroyed) return;
      if (this.socket.isPaused()) {
        this.frameTimer = setTimeout(expire, timeoutMs);
        return;
      }
      events.frameStalled?.(this.deframer.bufferedBytes);
      this.socket.destroy();
    };
    this.frameTimer = setTimeout(expire, timeoutMs);
  }

  /** Packs and writes one message; false when it cannot be packed (a bug in what we built) or the socket is gone. */
  send(message: Message): boolean {
    const packed = pack(message, this.codec.dictionary);
    if (!packed.ok) throw new Error(`cannot pack ${JSON.stringify(maskMessage(message, this.codec.dictionary))}: ${packed.error.code} ${packed.error.message}`);
    const framed = frameMessage(packed.value, this.codec.framing, this.codec.frameBytesMax);
    if (!framed.ok) throw new Error(`cannot frame ${message.mti}: ${framed.error.code}`);
    if (this.socket.destroyed || !this.socket.writable) return false;
    this.socket.write(framed.value);
    return true;
  }
}

/** The MTI of a frame that did not unpack, when its first bytes are one: a format-error answer is then possible. */
function readableMti(frame: Buffer, dictionary: Dictionary): string | undefined {
  const text = dictionary.mti.encoding === "bcd" ? frame.subarray(0, 2).toString("hex") : frame.subarray(0, 4).toString("latin1");
  return /^\d{4}$/.test(text) ? text : undefined;
}

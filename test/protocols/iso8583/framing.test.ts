import { describe, expect, it } from "vitest";
import { limits } from "../../../src/config/limits.ts";
import {
  createDeframer, decodeFrameHeader, encodeFrameHeader, frameMessage, framings, type Framing,
} from "../../../src/protocols/iso8583/index.ts";

const bodies = [Buffer.from("0800822000000000000004000000000000000611080000000001001"), Buffer.from("x"), Buffer.from("0810" + "y".repeat(300))];

function framedStream(framing: Framing): Buffer {
  return Buffer.concat(bodies.map((body) => {
    const framed = frameMessage(body, framing);
    if (!framed.ok) throw new Error(framed.error.message);
    return framed.value;
  }));
}

describe("framing", () => {
  for (const framing of framings) {
    it(`${framing}: one read holding several frames yields each frame in order`, () => {
      const deframer = createDeframer(framing);
      expect(deframer.push(framedStream(framing))).toEqual({ frames: bodies, error: undefined });
      expect(deframer.finish().ok).toBe(true);
    });

    it(`${framing}: the stream split at every point yields the same frames`, () => {
      const stream = framedStream(framing);
      for (let split = 0; split <= stream.length; split++) {
        const deframer = createDeframer(framing);
        const first = deframer.push(stream.subarray(0, split));
        const second = deframer.push(stream.subarray(split));
        expect(first.error).toBeUndefined();
        expect(second.error).toBeUndefined();
        expect([...first.frames, ...second.frames]).toEqual(bodies);
        expect(deframer.bufferedBytes).toBe(0);
      }
    });

    it(`${framing}: the stream fed one byte at a time yields the same frames`, () => {
      const deframer = createDeframer(framing);
      const frames: Buffer[] = [];
      for (const byte of framedStream(framing)) frames.push(...deframer.push(Buffer.from([byte])).frames);
      expect(frames).toEqual(bodies);
    });

    it(`${framing}: a frame header one byte over frameBytesMax is refused before its body arrives`, () => {
      const frameBytesMax = 100;
      const header = encodeFrameHeader(frameBytesMax + 1, framing);
      expect(header.ok).toBe(true);
      if (!header.ok) return;
      const deframer = createDeframer(framing, frameBytesMax);
      const result = deframer.push(header.value);
      expect(result.frames).toEqual([]);
      expect(result.error?.code).toBe("ISO8583_FRAME_TOO_LARGE");
    });

    it(`${framing}: a frame of exactly frameBytesMax is accepted`, () => {
      const body = Buffer.alloc(100, 0x41);
      const framed = frameMessage(body, framing, 100);
      expect(framed.ok).toBe(true);
      if (framed.ok) expect(createDeframer(framing, 100).push(framed.value).frames).toEqual([body]);
    });

    it(`${framing}: a stream ending inside a frame is reported at finish`, () => {
      const deframer = createDeframer(framing);
      const stream = framedStream(framing);
      deframer.push(stream.subarray(0, stream.length - 1));
      const finished = deframer.finish();
      expect(finished.ok).toBe(false);
      if (!finished.ok) expect(finished.error.code).toBe("ISO8583_FRAME_TRUNCATED");
    });
  }

  it("frames with a 2-byte big-endian binary length by default", () => {
    expect(frameMessage(Buffer.from("abc"))).toEqual({ ok: true, value: Buffer.from("0003616263", "hex") });
  });

  it("refuses to frame a message one byte over the configured frame limit", () => {
    const frameBytesMax = limits.iso8583.frameBytesMax;
    expect(frameMessage(Buffer.alloc(frameBytesMax)).ok).toBe(true);
    const framed = frameMessage(Buffer.alloc(frameBytesMax + 1));
    expect(framed.ok).toBe(false);
    if (!framed.ok) expect(framed.error.code).toBe("ISO8583_FRAME_TOO_LARGE");
  });

  it("refuses a frame announcing one byte over the configured frame limit", () => {
    const result = createDeframer().push(Buffer.from([(limits.iso8583.frameBytesMax + 1) >> 8, (limits.iso8583.frameBytesMax + 1) & 0xff]));
    expect(result.error?.code).toBe("ISO8583_FRAME_TOO_LARGE");
  });

  it("never buffers more than one header and one maximum frame", () => {
    const deframer = createDeframer("binary-2", 100);
    deframer.push(Buffer.from([0, 100]));
    deframer.push(Buffer.alloc(99));
    expect(deframer.bufferedBytes).toBe(101);
  });

  it("keeps refusing after an error, since the stream is out of step", () => {
    const deframer = createDeframer("ascii-4");
    const first = deframer.push(Buffer.from("00x1abc"));
    expect(first.error?.code).toBe("ISO8583_FRAME_HEADER_INVALID");
    expect(deframer.push(Buffer.from("0001a")).error).toEqual(first.error);
  });

  it("delivers the frames that precede a bad header in the same read", () => {
    const result = createDeframer("ascii-4").push(Buffer.from("0001a" + "zz"));
    expect(result.frames).toEqual([Buffer.from("a")]);
    expect(result.error).toBeUndefined();
    const bad = createDeframer("ascii-4").push(Buffer.from("0001a" + "zzzz"));
    expect(bad.frames).toEqual([Buffer.from("a")]);
    expect(bad.error).toMatchObject({ code: "ISO8583_FRAME_HEADER_INVALID", position: { byteOffset: 5 } });
  });

  it("refuses a BCD header with a nibble above 9", () => {
    const length = decodeFrameHeader(Buffer.from("0A15", "hex"), "bcd-2");
    expect(length.ok).toBe(false);
  });

  it("refuses to write a length its header cannot state", () => {
    expect(encodeFrameHeader(10_000, "ascii-4").ok).toBe(false);
    expect(encodeFrameHeader(9_999, "ascii-4")).toEqual({ ok: true, value: Buffer.from("9999") });
    expect(encodeFrameHeader(10_000, "bcd-2").ok).toBe(false);
    expect(encodeFrameHeader(0xffff, "binary-2")).toEqual({ ok: true, value: Buffer.from("FFFF", "hex") });
    expect(encodeFrameHeader(0x10000, "binary-2").ok).toBe(false);
  });

  it("does not keep a reference to the caller's buffer", () => {
    const deframer = createDeframer();
    const chunk = Buffer.from("0003616263", "hex");
    const { frames } = deframer.push(chunk);
    chunk.fill(0);
    expect(frames).toEqual([Buffer.from("abc")]);
  });
});

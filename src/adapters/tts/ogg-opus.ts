/**
 * Opus in Ogg (RFC 7845, RFC 3533), streamed: libopus in WebAssembly (the `opusscript` package,
 * 48 kHz mono, 20 ms frames, the format's bitrate) and our Ogg pages. The first push sends the
 * identification header (`OpusHead`, pre-skip = the encoder's lookahead) and the comment header
 * (`OpusTags`), each on its own page, then pages of the frames encoded so far; `end()` encodes
 * what is left padded with silence and sends the last page, flagged end-of-stream, whose granule
 * position (pre-skip + samples) tells the decoder to drop the padding. Deterministic: the stream's
 * serial number is fixed and the encoder is new per stream.
 */
import OpusScript from 'opusscript';

const RATE = 48_000;
const FRAME = 960; // 20 ms
/** libopus' lookahead at 48 kHz for the AUDIO application (2.5 ms + 4 ms delay compensation). */
export const OPUS_PRE_SKIP = 312;
const SERIAL = 0x53424f50;
const MAX_SEGMENTS = 255;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32 (polynomial 0x04c11db7, not reflected, initial 0). */
function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc >>> 0;
}

function page(packets: Buffer[], granule: bigint, sequence: number, flags: number): Buffer {
  const lacing: number[] = [];
  for (const packet of packets) {
    let left = packet.length;
    while (left >= 255) {
      lacing.push(255);
      left -= 255;
    }
    lacing.push(left);
  }
  const header = Buffer.alloc(27 + lacing.length);
  header.write('OggS', 0, 'latin1');
  header[4] = 0; // version
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(SERIAL, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  lacing.forEach((value, i) => (header[27 + i] = value));
  const out = Buffer.concat([header, ...packets]);
  out.writeUInt32LE(oggCrc(out), 22);
  return out;
}

function segmentsOf(packet: Buffer): number {
  return Math.floor(packet.length / 255) + 1;
}

export interface OggOpusEncoder {
  /** 48 kHz 16-bit mono PCM in; the Ogg pages completed by it out. */
  push(pcm: Int16Array): Buffer;
  end(): Buffer;
}

export function createOggOpusEncoder(kbps: number, inputRate: number): OggOpusEncoder {
  const opus = new OpusScript(RATE, 1, OpusScript.Application.AUDIO);
  opus.setBitrate(kbps * 1000);
  let sequence = 0;
  let pending = new Int16Array(0);
  let samples = 0; // real samples pushed
  let encoded = 0; // samples given to the encoder, padding included
  let started = false;

  function headers(): Buffer {
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'latin1');
    head[8] = 1; // version
    head[9] = 1; // channels
    head.writeUInt16LE(OPUS_PRE_SKIP, 10);
    head.writeUInt32LE(inputRate, 12);
    head.writeInt16LE(0, 16); // output gain
    head[18] = 0; // mapping family
    const vendor = Buffer.from('libopus 1.4 (opusscript)', 'utf8');
    const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
    tags.write('OpusTags', 0, 'latin1');
    tags.writeUInt32LE(vendor.length, 8);
    vendor.copy(tags, 12);
    tags.writeUInt32LE(0, 12 + vendor.length);
    return Buffer.concat([page([head], 0n, sequence++, 0x02), page([tags], 0n, sequence++, 0)]);
  }

  function frames(pcm: Int16Array): Buffer[] {
    const packets: Buffer[] = [];
    for (let at = 0; at + FRAME <= pcm.length; at += FRAME) {
      const frame = pcm.subarray(at, at + FRAME);
      packets.push(Buffer.from(opus.encode(Buffer.from(frame.buffer, frame.byteOffset, FRAME * 2), FRAME)));
      encoded += FRAME;
    }
    return packets;
  }

  /** Pages of `packets`, at most 255 segments each; the last page carries `lastGranule` and `lastFlags`. */
  function pages(packets: Buffer[], lastGranule: bigint, lastFlags: number): Buffer[] {
    const out: Buffer[] = [];
    let group: Buffer[] = [];
    let segments = 0;
    let granule = BigInt(encoded - packets.length * FRAME);
    for (const packet of packets) {
      if (segments + segmentsOf(packet) > MAX_SEGMENTS) {
        out.push(page(group, granule, sequence++, 0));
        group = [];
        segments = 0;
      }
      group.push(packet);
      segments += segmentsOf(packet);
      granule += BigInt(FRAME);
    }
    if (group.length) out.push(page(group, lastGranule, sequence++, lastFlags));
    return out;
  }

  function take(pcm: Int16Array): Int16Array {
    const all = new Int16Array(pending.length + pcm.length);
    all.set(pending);
    all.set(pcm, pending.length);
    const whole = all.length - (all.length % FRAME);
    pending = all.slice(whole);
    return all.subarray(0, whole);
  }

  return {
    push(pcm) {
      const out: Buffer[] = [];
      if (!started) {
        started = true;
        out.push(headers());
      }
      samples += pcm.length;
      const packets = frames(take(pcm));
      if (packets.length) out.push(...pages(packets, BigInt(encoded), 0));
      return Buffer.concat(out);
    },
    end() {
      const out: Buffer[] = [];
      if (!started) {
        started = true;
        out.push(headers());
      }
      // Enough silence after the last sample for the lookahead to bring it out, in whole frames.
      const needed = samples + OPUS_PRE_SKIP - encoded;
      const padded = new Int16Array(Math.max(FRAME, Math.ceil(needed / FRAME) * FRAME));
      padded.set(pending);
      pending = new Int16Array(0);
      const packets = frames(padded);
      out.push(...pages(packets, BigInt(OPUS_PRE_SKIP + samples), 0x04));
      opus.delete();
      return Buffer.concat(out);
    },
  };
}

/**
 * The Xing "Info" frame with its LAME extension that leads a complete CBR MP3 file: the number of
 * audio frames and bytes, and above all the encoder delay and padding (12 bits each), so that a
 * decoder that reads it (ffmpeg, browsers, players) drops the encoder's leading silence and the
 * last frame's padding. MP3 chunks decoded one after another then play back to back without gaps,
 * and the file's duration is exact. Layout: the Xing tag after the side information (17 bytes for
 * MPEG-1 mono, 9 for MPEG-2 mono), then LAME's 36 bytes; the tag's CRC-16 covers the frame's first
 * 190 bytes. The frame itself is a silent frame to decoders that do not read it.
 */

/** LAME's encoder delay (ENCDELAY) for input at the output rate (no resampling inside LAME). */
export const LAME_ENCODER_DELAY = 576;

const MPEG1_KBPS = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_KBPS = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const RATES: Record<number, { version: number; index: number }> = {
  44100: { version: 3, index: 0 },
  48000: { version: 3, index: 1 },
  32000: { version: 3, index: 2 },
  22050: { version: 2, index: 0 },
  24000: { version: 2, index: 1 },
  16000: { version: 2, index: 2 },
};

/** Whether MPEG audio has a frame of `kbps` at `sampleRate` (MPEG-1: 32–48 kHz, MPEG-2: 16–24 kHz). */
export function isMp3Bitrate(sampleRate: number, kbps: number): boolean {
  const rate = RATES[sampleRate];
  return rate !== undefined && kbps > 0 && (rate.version === 3 ? MPEG1_KBPS : MPEG2_KBPS).includes(kbps);
}

/** Samples per frame: 1152 for MPEG-1, 576 for MPEG-2. */
export function samplesPerFrame(sampleRate: number): number {
  return RATES[sampleRate]?.version === 3 ? 1152 : 576;
}

/** CRC-16 as LAME computes it (polynomial 0x8005, reflected, initial 0). */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc & 0xffff;
}

/** Counts the frames of a CBR MP3 run by walking its headers. */
export function countMp3Frames(mp3: Buffer): number {
  let frames = 0;
  for (let at = 0; at + 4 <= mp3.length;) {
    const header = mp3.readUInt32BE(at);
    if (header >>> 21 !== 0x7ff) throw new Error(`not an MP3 frame header at byte ${at}`);
    const mpeg1 = ((header >>> 19) & 3) === 3;
    const kbps = (mpeg1 ? MPEG1_KBPS : MPEG2_KBPS)[(header >>> 12) & 15]!;
    const rate = [44100, 48000, 32000][(header >>> 10) & 3]! / (mpeg1 ? 1 : 2);
    const padding = (header >>> 9) & 1;
    at += Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / rate) + padding;
    frames++;
  }
  return frames;
}

export interface Mp3InfoInput {
  sampleRate: number;
  kbps: number;
  /** The encoded audio frames (without an info frame). */
  audio: Buffer;
  /** PCM samples fed to the encoder, at `sampleRate`. */
  samples: number;
}

/** The info frame for `input.audio`; prepend it to make the complete file. */
export function mp3InfoFrame(input: Mp3InfoInput): Buffer {
  const rate = RATES[input.sampleRate];
  if (!rate) throw new Error(`no MP3 info frame for ${input.sampleRate} Hz`);
  const mpeg1 = rate.version === 3;
  const table = mpeg1 ? MPEG1_KBPS : MPEG2_KBPS;
  const perFrame = (kbps: number) => Math.floor(((mpeg1 ? 144 : 72) * kbps * 1000) / input.sampleRate);
  // The frame must hold side info, the Xing tag with its table of contents and LAME's tag (192 bytes).
  const kbps = perFrame(input.kbps) >= 192 ? input.kbps : mpeg1 ? 128 : 64;
  const size = perFrame(kbps);
  const frame = Buffer.alloc(size);
  // Sync, version, layer III, no CRC; bitrate, rate, no padding; mono.
  const header =
    (0x7ff << 21) |
    (rate.version << 19) |
    (1 << 17) |
    (1 << 16) |
    (table.indexOf(kbps) << 12) |
    (rate.index << 10) |
    (3 << 6);
  frame.writeUInt32BE(header >>> 0, 0);
  let at = 4 + (mpeg1 ? 17 : 9);
  const frames = countMp3Frames(input.audio);
  const spf = samplesPerFrame(input.sampleRate);
  const padding = frames * spf - LAME_ENCODER_DELAY - input.samples;
  if (padding < 0 || padding > 4095) throw new Error(`MP3 padding out of range: ${padding}`);
  const total = size + input.audio.length;
  frame.write('Info', at, 'latin1');
  frame.writeUInt32BE(0x0f, at + 4); // frames, bytes, table of contents, quality
  frame.writeUInt32BE(frames, at + 8);
  frame.writeUInt32BE(total, at + 12);
  for (let i = 0; i < 100; i++) frame[at + 16 + i] = Math.floor((i * 256) / 100);
  frame.writeUInt32BE(0, at + 116); // quality
  at += 120;
  frame.write('LAME3.100', at, 'latin1');
  frame[at + 9] = 0x01; // tag revision 0, CBR
  frame[at + 10] = Math.min(255, Math.round(input.sampleRate / 2 / 100)); // lowpass / 100 Hz
  // Peak and replay gains: 8 bytes of zeros (not measured). Encoding flags and ATH: 0.
  frame[at + 20] = Math.min(255, input.kbps);
  frame.writeUIntBE((LAME_ENCODER_DELAY << 12) | padding, at + 21, 3);
  // Misc, MP3 gain, preset and surround: zeros.
  frame.writeUInt32BE(total, at + 28);
  frame.writeUInt16BE(crc16(input.audio), at + 32);
  frame.writeUInt16BE(crc16(frame.subarray(0, 190)), at + 34);
  return frame;
}

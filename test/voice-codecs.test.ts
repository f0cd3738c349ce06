/**
 * Every output format of the offline engine decoded by a decoder nobody here wrote (Debian's
 * ffmpeg) and compared with the same synthesis as WAV: one espeak-ng synthesis, encoded sentence
 * by sentence as the engine's job does, complete (spoken turns' chunks, WAV bodies) and streamed.
 * Lossless formats give the same samples, G.711 ≥ 30 dB SNR, MP3 and Opus ≥ 0.95 correlation at
 * lag 0 and, complete, exactly the samples there were (MP3 info frame, Ogg granule): files decoded
 * one after another join without gaps. WAV sizes and PCM byte order are checked too.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ESPEAK_FORMATS } from '../src/adapters/espeak/espeak-tts.js';
import { espeakEngine } from '../src/adapters/espeak/espeak-wasm.js';
import { createEncoder, parseFormat } from '../src/adapters/tts/encoders.js';
import { splitSentences } from '../src/adapters/tts/sentences.js';
import type { OutputFormat } from '../src/ports/text-to-speech.js';
import { correlation, ffmpegDecode, ffprobe, hasFfmpeg, NO_FFMPEG, rawInput, snrDb } from './helpers/ffmpeg.js';

const TEXT = 'Your order has shipped. It should arrive on Monday, before noon. Is there anything else?';

if (!hasFfmpeg) console.warn(NO_FFMPEG);

interface Synthesis {
  sentences: Int16Array[];
  rate: number;
}

function encode(
  format: OutputFormat,
  synthesis: Synthesis,
  complete: boolean,
  sentences = synthesis.sentences,
): Buffer {
  const encoder = createEncoder(format, synthesis.rate, { complete });
  return Buffer.concat([...sentences.map((pcm) => encoder.push(pcm)), encoder.end()]);
}

const CODEC: Record<string, string> = {
  mp3: 'mp3',
  pcm: 'pcm_s16le',
  wav: 'pcm_s16le',
  ulaw: 'pcm_mulaw',
  alaw: 'pcm_alaw',
  opus: 'opus',
};

describe.skipIf(!hasFfmpeg)('every format decoded by ffmpeg against the same synthesis as WAV', () => {
  let synthesis: Synthesis;
  const references = new Map<number, Int16Array>();
  /** The same synthesis as a complete WAV at `rate`, decoded by ffmpeg. */
  const reference = async (rate: number) => {
    if (!references.has(rate))
      references.set(rate, await ffmpegDecode(encode(`wav_${rate}` as OutputFormat, synthesis, true)));
    return references.get(rate)!;
  };

  beforeAll(async () => {
    const engine = await espeakEngine();
    const spoken = splitSentences(TEXT).map((sentence) => engine.speak('en-us+f3', 175, sentence));
    synthesis = { sentences: spoken.map((pcm) => pcm.samples), rate: spoken[0]!.sampleRate };
  });

  it.each(ESPEAK_FORMATS.map((format) => [format]))('%s', async (format) => {
    const { codec, sampleRate, kbps } = parseFormat(format);
    const expected = await reference(sampleRate);
    for (const complete of [true, false]) {
      const bytes = encode(format, synthesis, complete);
      const probed = await ffprobe(bytes, rawInput(format));
      expect(probed.codec_name).toBe(CODEC[codec]);
      expect(Number(probed.sample_rate)).toBe(sampleRate);
      expect(probed.channels).toBe(1);
      if (codec === 'mp3') expect(Number(probed.bit_rate)).toBe(kbps! * 1000);
      const decoded = await ffmpegDecode(bytes, rawInput(format));
      const label = `${format} ${complete ? 'complete' : 'streamed'}`;
      if (codec === 'pcm' || codec === 'wav') {
        expect(Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength), label).toEqual(
          Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength),
        );
      } else if (codec === 'ulaw' || codec === 'alaw') {
        expect(decoded.length, label).toBe(expected.length);
        expect(snrDb(expected, decoded), label).toBeGreaterThan(30);
      } else if (complete || codec === 'opus') {
        // Encoder delay and padding dropped by the decoder: exactly the samples there were.
        expect(decoded.length, label).toBe(expected.length);
        expect(correlation(expected, decoded), label).toBeGreaterThan(0.95);
        expect(snrDb(expected, decoded), label).toBeGreaterThan(10);
      } else {
        // A streamed MP3 has no info frame: the decoder keeps the encoder's delay and last padding.
        expect(decoded.length, label).toBeGreaterThan(expected.length);
      }
    }
  });

  it('sends WAV with its real RIFF and data sizes when complete, placeholders when streamed', () => {
    const complete = encode('wav_16000', synthesis, true);
    expect(complete.toString('latin1', 0, 4)).toBe('RIFF');
    expect(complete.readUInt32LE(4)).toBe(complete.length - 8);
    expect(complete.toString('latin1', 36, 40)).toBe('data');
    expect(complete.readUInt32LE(40)).toBe(complete.length - 44);
    const streamed = encode('wav_16000', synthesis, false);
    expect(streamed.readUInt32LE(40)).toBe(0xffffffff);
    expect(streamed.subarray(44)).toEqual(complete.subarray(44));
  });

  it('sends raw PCM little-endian (as its audio/pcm label says), not the big-endian of audio/L16', async () => {
    const bytes = encode('pcm_24000', synthesis, false);
    const expected = await reference(24000);
    expect(
      correlation(expected, await ffmpegDecode(bytes, ['-f', 's16le', '-ar', '24000', '-ac', '1'])),
    ).toBeGreaterThan(0.999);
    expect(
      Math.abs(correlation(expected, await ffmpegDecode(bytes, ['-f', 's16be', '-ar', '24000', '-ac', '1']))),
    ).toBeLessThan(0.5);
  });

  it.each([['mp3_44100_128'], ['mp3_22050_32'], ['opus_48000_64']] as const)(
    '%s files of one sentence each, decoded one after another, join without gaps',
    async (format) => {
      const { sampleRate } = parseFormat(format);
      const parts = synthesis.sentences.map((pcm) => encode(format, synthesis, true, [pcm]));
      const decoded = await Promise.all(parts.map((part) => ffmpegDecode(part)));
      const wavs = await Promise.all(
        synthesis.sentences.map((pcm) =>
          ffmpegDecode(encode(`wav_${sampleRate}` as OutputFormat, synthesis, true, [pcm])),
        ),
      );
      decoded.forEach((part, i) => expect(part.length).toBe(wavs[i]!.length));
      const joined = Int16Array.from(decoded.flatMap((part) => [...part]));
      const expected = Int16Array.from(wavs.flatMap((part) => [...part]));
      expect(joined.length).toBe(expected.length);
      expect(correlation(expected, joined)).toBeGreaterThan(0.95);
      if (format.startsWith('mp3')) {
        // Without the info frame each file would carry ≥ 1105 samples of encoder delay and decoder lag.
        const bare = await ffmpegDecode(encode(format, synthesis, false, [synthesis.sentences[0]!]));
        expect(bare.length - wavs[0]!.length).toBeGreaterThanOrEqual(1105);
      }
    },
  );
});

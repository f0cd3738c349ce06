/**
 * A spoken turn's MP3 chunks play back to back without gaps: the `audio_chunk` files of one
 * `POST /voice-agents/{id}/respond` (its first sentence in two chunks: the first moment, then the
 * rest), decoded one after another by ffmpeg (its concat demuxer, as a gapless player does), give
 * as many samples as the same sentences synthesised as WAV — within one MP3 frame — and the same
 * waveform chunk by chunk: a gap at a join would shift every sample after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFormat } from '../src/adapters/tts/encoders.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { ffmpegDecode, ffmpegDecodeSequence, hasFfmpeg, NO_FFMPEG, snrDb } from './helpers/ffmpeg.js';
import { createTenant, type TestTenant } from './helpers/factories.js';
import { multipart, uploadArticle, waitForTask } from './knowledge/helpers.js';

const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const ARTICLE = {
  document_title: 'Returns and refunds',
  content:
    'Q: How long do refunds take?\nA: Refunds are paid to the original card within 5 business days after we receive the item. ' +
    'You get an e-mail when the refund leaves our bank. Sale items can be returned within 14 days in their original packaging.',
};

if (!hasFfmpeg) console.warn(NO_FFMPEG);

let t: TestApp;
let tenant: TestTenant;

async function api(url: string, payload: object) {
  return t.app.inject({ method: 'POST', url: `/api/public${url}`, headers: tenant.headers, payload });
}

interface AudioChunk {
  index: number;
  text: string;
  audio: string;
}

beforeAll(async () => {
  t = await createTestApp({ EMBEDDINGS_PROVIDER: 'none', RATE_LIMIT_ENABLED: 'false' });
  tenant = await createTenant(t.container);
  const upload = await uploadArticle(t.app, tenant.headers, ARTICLE);
  expect((await waitForTask(t, tenant.headers, upload.task_id)).status).toBe('completed');
});
afterAll(async () => {
  await t?.close();
});

describe.skipIf(!hasFfmpeg)('a spoken turn in MP3', () => {
  it.each([['mp3_44100_128'], ['mp3_22050_32']] as const)(
    '%s: its chunks decoded one after another are the sentences as WAV, no gap at any join',
    async (format) => {
      const agent = await api('/agents', { title: 'Helper', model: 'builtin:kb' });
      const voice = await api('/voice-agents', {
        name: 'Front desk',
        voice_id: RACHEL,
        main_agent_id: agent.json<{ id: string }>().id,
        active: true,
        output_format: format,
      });
      expect(voice.statusCode).toBe(201);
      const form = multipart({ text: 'How long do refunds take?' });
      const res = await t.app.inject({
        method: 'POST',
        url: `/api/public/voice-agents/${voice.json<{ id: string }>().id}/respond`,
        headers: { ...tenant.headers, ...form.headers, accept: 'text/event-stream' },
        payload: form.payload,
      });
      expect(res.statusCode).toBe(200);
      const chunks = res.body
        .split('\n\n')
        .filter((frame) => frame.startsWith('event: audio_chunk'))
        .map((frame) => JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as AudioChunk);
      const sentences = chunks.map((chunk) => chunk.text).filter(Boolean);
      expect(sentences.length).toBeGreaterThan(1);
      // The first sentence came in two chunks: its first moment, then the rest (text "").
      expect(chunks[0]!.text).toBe(sentences[0]);
      expect(chunks[1]!.text).toBe('');

      const files = chunks.map((chunk) => Buffer.from(chunk.audio, 'base64'));
      const joined = await ffmpegDecodeSequence(files);
      const { sampleRate } = parseFormat(format);
      const wavs = await Promise.all(
        sentences.map(async (text) => {
          const wav = await api(`/voice-agents/vendor/voices/${RACHEL}/tts`, {
            text,
            language_code: 'en',
            output_format: `wav_${sampleRate}`,
          });
          expect(wav.statusCode).toBe(200);
          return ffmpegDecode(wav.rawPayload);
        }),
      );
      const expected = Int16Array.from(wavs.flatMap((wav) => [...wav]));
      const frame = sampleRate >= 32_000 ? 1152 : 576;
      expect(Math.abs(joined.length - expected.length)).toBeLessThanOrEqual(frame);

      // Chunk by chunk, where each file's samples fall: the waveform of the WAV at the same place.
      const lengths = await Promise.all(files.map(async (file) => (await ffmpegDecode(file)).length));
      let at = 0;
      for (const [i, length] of lengths.entries()) {
        const label = `${format} chunk ${i} (${length} samples at ${at})`;
        expect(snrDb(expected.subarray(at, at + length), joined.subarray(at, at + length)), label).toBeGreaterThan(10);
        at += length;
      }
      expect(at).toBe(joined.length);
      expect(snrDb(expected, joined), format).toBeGreaterThan(15);
      // Where the first sentence was cut (mid-sentence, not in a pause): no silence there either.
      const cut = lengths[0]!;
      const window = (samples: Int16Array) => samples.subarray(cut - frame, cut + frame);
      expect(snrDb(window(expected), window(joined))).toBeGreaterThan(10);
    },
    120_000,
  );
});

/**
 * Text to speech over OpenAI's speech protocol (`POST {baseUrl}/audio/speech`, bearer key,
 * `{ model, input, voice, response_format, speed }`, audio streamed back): OpenAI, Kokoro-FastAPI,
 * LocalAI, openedai-speech. The protocol's formats name no rate or bitrate (its MP3 is whatever
 * the server encodes), so every format is made here from the protocol's raw PCM (24 kHz, 16-bit
 * little-endian mono): `pcm_24000` streams through as it arrives, `wav_24000` is that stream in
 * our WAV header, and the other formats are the whole PCM resampled and encoded by the project's
 * encoders in the CPU pool (../tts/encode.job.ts) — an `mp3_44100_128` answer is MP3 at 44.1 kHz
 * and 128 kb/s, whatever the server's MP3 would have been; it leaves once the server has sent all
 * its audio. `speed` (percent) is the protocol's factor, bounded to 0.25–4; stability, similarity
 * boost and style are ignored.
 */
import { cpuJobModule, type CpuJob, type CpuPool } from '../../lib/cpu-pool.js';
import { SpeechError } from '../../ports/speech.js';
import { OUTPUT_FORMATS, type TextToSpeech } from '../../ports/text-to-speech.js';
import { SPEECH_KIND } from '../espeak/espeak-tts.js';
import type { EncodeJobInput } from '../tts/encode.job.js';
import { wavHeader } from '../tts/encoders.js';
import { streamSpeech } from '../tts/http-speech.js';

export interface OpenAiTtsOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** Where the PCM is transcoded into the other formats. */
  cpu: CpuPool;
}

/** The protocol's raw PCM rate. */
const PCM_RATE = 24_000;

const ENCODE_JOB: CpuJob<EncodeJobInput, Uint8Array> = {
  kind: SPEECH_KIND,
  module: cpuJobModule(import.meta.url, '../tts/encode.job'),
  name: 'encodePcm',
  reviveError: (failure) => new SpeechError(`Encoding the provider's audio failed: ${failure.message}`, 'provider'),
};

export function createOpenAiTts(options: OpenAiTtsOptions): TextToSpeech {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/audio/speech`;
  return {
    id: `openai:${options.model}`,
    formats: OUTPUT_FORMATS,
    async *synthesize(request, signal) {
      const body = {
        model: request.modelId ?? options.model,
        input: request.text,
        voice: request.voice.voiceId,
        response_format: 'pcm',
        ...(request.speed !== undefined ? { speed: Math.min(4, Math.max(0.25, request.speed / 100)) } : {}),
      };
      const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
      const post = { provider: 'The text-to-speech provider', endpoint, headers, body, timeoutMs: options.timeoutMs };
      const audio = streamSpeech(post, signal);
      if (request.format === 'pcm_24000' || request.format === 'wav_24000') {
        let first = request.format === 'wav_24000';
        for await (const chunk of audio) {
          if (first) {
            first = false;
            yield wavHeader(PCM_RATE);
          }
          yield chunk;
        }
        return;
      }
      const parts: Buffer[] = [];
      for await (const chunk of audio) parts.push(chunk);
      const pcm = new Uint8Array(Buffer.concat(parts));
      if (pcm.byteLength < 2) throw new SpeechError('The text-to-speech provider answered without audio', 'provider');
      const input: EncodeJobInput = {
        format: request.format,
        sampleRate: PCM_RATE,
        pcm,
        ...(request.complete ? { complete: true } : {}),
      };
      const encoded = await options.cpu.run(ENCODE_JOB, input, { signal, transfer: [pcm.buffer] });
      yield Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
    },
  };
}

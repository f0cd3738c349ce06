/**
 * A voice turn (DESIGN §9): audio or text in, the voice agent's main agent answers through the
 * chat family's turn (conversation on channel `voice`, the same records as a chat: messages,
 * support query, notifications, tools), and the answer is spoken with the voice agent's voice
 * and settings. Streamed, each finished sentence is synthesised as soon as its text is complete
 * while later text still streams; otherwise the whole answer is spoken as one audio body.
 */
import type { Db } from '../../db/database.js';
import type { ChatCaller, CompanyContext } from '../../http/caller.js';
import { AppError, AppErrors } from '../../http/errors.js';
import type { AudioFile } from '../../ports/speech.js';
import { contentTypeOf, type OutputFormat } from '../../ports/text-to-speech.js';
import type { ChatModule, PreparedTurn, TurnResult } from '../chat/index.js';
import { findVoiceAgent, type VoiceAgentRow } from './voice-agents.repo.js';
import type { SpeakInput, SpokenAudio, VoiceSpeechService } from './voice-agents.speech.js';

export interface VoiceRespondDeps {
  db: Db;
  turns: Pick<ChatModule['turns'], 'prepare' | 'run'>;
  speech: VoiceSpeechService;
}

export interface RespondInput {
  audio?: AudioFile;
  text?: string;
  conversation_id?: string;
  user?: string;
  /** The query's `?output_format=`, for this turn instead of the voice agent's. */
  output_format?: string;
}

export type VoiceEvent =
  | { type: 'start'; conversation_id: string; voice_agent_id: string }
  | { type: 'transcribed_text'; content: string }
  | { type: 'agent_text_chunk'; content: string }
  | {
      type: 'audio_chunk';
      index: number;
      format: string;
      content_type: string;
      /**
       * What was spoken (the sentence without citation markers); empty in a chunk that continues
       * the sentence of the chunk before it (a turn's first sentence may come in two).
       */
      text: string;
      /** Milliseconds from the moment this sentence's text was complete on the server to this event. */
      text_to_audio_ms: number;
      audio: string;
    }
  | { type: 'citations'; citations: VoiceCitation[] }
  | { type: 'end'; conversation_id: string; message_id: string | null }
  | { type: 'error'; status: number; detail: string };

/** A passage the answer relied on, carried as data (never spoken). */
export interface VoiceCitation {
  document_id: string;
  chunk_id: string;
  collection_id: string | null;
  title: string;
  score: number;
  text: string;
}

export interface PreparedVoiceTurn {
  voiceAgent: VoiceAgentRow;
  transcript: string | null;
  turn: PreparedTurn;
  /** The format spoken: the request's, else the voice agent's (checked against the engine). */
  format: OutputFormat;
}

/** The chat channel and region of voice turns (`agent:<main agent>:voice:global`). */
export const VOICE_CHANNEL = 'voice';
export const VOICE_REGION = 'global';
export const MAX_TEXT = 8000;

/** The end of a sentence: terminal punctuation (Latin, Arabic, CJK), closing quotes, then space. */
const SENTENCE_END = /[.!?؟。！？…]+["'”’»)\]]*\s+/g;

/** Splits streamed text into finished sentences; `rest()` is what is left at the end. */
export function sentenceSplitter() {
  let buffer = '';
  return {
    push(delta: string): string[] {
      buffer += delta;
      const sentences: string[] = [];
      let from = 0;
      SENTENCE_END.lastIndex = 0;
      for (let match = SENTENCE_END.exec(buffer); match; match = SENTENCE_END.exec(buffer)) {
        const end = match.index + match[0].length;
        const sentence = buffer.slice(from, end).trim();
        if (sentence) sentences.push(sentence);
        from = end;
      }
      buffer = buffer.slice(from);
      return sentences;
    },
    rest(): string {
      const left = buffer.trim();
      buffer = '';
      return left;
    },
  };
}

/** Citation markers a model writes (`[1]`, `[2, 3]`): data for the reader, never read aloud. */
const CITATION_MARKER = /\s*\[\d+(?:\s*,\s*\d+)*\]/g;

/** The words of a sentence to speak: without citation markers (empty when nothing is left to say). */
export function spokenText(sentence: string): string {
  const text = sentence.replace(CITATION_MARKER, '').trim();
  return /[\p{L}\p{N}]/u.test(text) ? text : '';
}

function citationsOf(event: { citations?: unknown }): VoiceCitation[] {
  if (!Array.isArray(event.citations)) return [];
  return (event.citations as VoiceCitation[]).map(({ document_id, chunk_id, collection_id, title, score, text }) => ({
    document_id,
    chunk_id,
    collection_id,
    title,
    score,
    text,
  }));
}

async function collect(audio: SpokenAudio): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of audio.body) parts.push(part);
  return Buffer.concat(parts);
}

const statusOf = (error: unknown) => (error instanceof AppError ? error.statusCode : 500);
const detailOf = (error: unknown) =>
  error instanceof AppError ? error.message : 'The voice turn failed (see the server log)';

export function createVoiceRespond(deps: VoiceRespondDeps) {
  const settings = (agent: VoiceAgentRow, format: OutputFormat, text: string): SpeakInput => ({
    text,
    model_id: agent.model_id,
    language_code: agent.language,
    output_format: format,
    voice_speed: agent.voice_speed,
    voice_stability: agent.voice_stability,
    voice_similarity_boost: agent.voice_similarity_boost,
    voice_style: agent.voice_style,
  });

  /** Long text in pieces the engine accepts (at most maxTextChars, cut at a space when one is near). */
  function pieces(text: string): string[] {
    const max = deps.speech.maxTextChars;
    const out: string[] = [];
    let rest = text;
    while (rest.length > max) {
      const space = rest.lastIndexOf(' ', max);
      const cut = space > max / 2 ? space : max;
      out.push(rest.slice(0, cut));
      rest = rest.slice(cut).trimStart();
    }
    if (rest.trim()) out.push(rest);
    return out;
  }

  return {
    /**
     * Checks the request and the voice agent, transcribes audio (the /stt route's errors), and
     * prepares the chat turn; every refusal here is a status, before any answer starts.
     */
    async prepare(
      context: CompanyContext,
      voiceAgentId: string,
      input: RespondInput,
      signal: AbortSignal,
    ): Promise<PreparedVoiceTurn> {
      if (input.audio && input.text !== undefined)
        throw AppErrors.validation("Invalid field 'text': send either audio or text, not both");
      if (!input.audio && input.text === undefined)
        throw AppErrors.validation("Invalid field 'text': send audio (a file) or text");
      if (input.text !== undefined && !input.text.trim())
        throw AppErrors.validation("Invalid field 'text': must not be blank");
      if (input.text !== undefined && input.text.length > MAX_TEXT)
        throw AppErrors.validation(`Invalid field 'text': at most ${MAX_TEXT} characters (got ${input.text.length})`);
      if (input.audio) deps.speech.checkAudio(input.audio, 'audio');
      const voiceAgent = await findVoiceAgent(deps.db, context.companyId, voiceAgentId);
      if (!voiceAgent) throw AppErrors.notFound('Voice agent', voiceAgentId);
      if (!voiceAgent.active)
        throw AppErrors.conflict(`Voice agent ${voiceAgent.id} is inactive: set active to true to talk to it`);
      if (!voiceAgent.main_agent_id)
        throw AppErrors.conflict(`Voice agent ${voiceAgent.id} has no main agent: set main_agent_id to answer`);
      const format = deps.speech.checkFormat(input.output_format ?? voiceAgent.output_format);
      let transcript: string | null = null;
      if (input.audio) {
        transcript = (await deps.speech.transcribe(input.audio, signal, 'audio')).text.trim();
        if (!transcript) throw AppErrors.validation("Invalid field 'audio': the audio contained no speech");
      }
      const caller: ChatCaller = { kind: 'chat', tokenId: null, companyId: context.companyId, agentId: null };
      const turn = await deps.turns.prepare(
        caller,
        {
          agent_key: `agent:${voiceAgent.main_agent_id}:${VOICE_CHANNEL}:${VOICE_REGION}`,
          query: transcript ?? input.text!,
          ...(input.conversation_id !== undefined ? { conversation_id: input.conversation_id } : {}),
          ...(input.user !== undefined ? { user: input.user } : {}),
        },
        // Spoken: the built-in responder's sources line is left out of the text (citations stay data).
        { temperature: voiceAgent.temperature, spoken: true },
        { deployment: false },
      );
      return { voiceAgent, transcript, turn, format };
    },

    /**
     * Streams the turn: `start`, `transcribed_text`, `agent_text_chunk`…, an `audio_chunk` per
     * finished sentence (synthesised in order, as soon as the sentence is complete), `citations`
     * (the passages the answer relied on, as data), `end`. Each event is handed to `send` the
     * moment it is produced — text never waits for audio. Failures are sent as `error` then `end`.
     * `signal` (the client leaving) stops the model call and any further synthesis.
     */
    async stream(prepared: PreparedVoiceTurn, signal: AbortSignal, send: (event: VoiceEvent) => void): Promise<void> {
      const { voiceAgent, turn, format } = prepared;
      const contentType = contentTypeOf(format);
      const scope = { companyId: voiceAgent.company_id };
      send({ type: 'start', conversation_id: turn.conversation.id, voice_agent_id: voiceAgent.id });
      if (prepared.transcript !== null) send({ type: 'transcribed_text', content: prepared.transcript });
      const splitter = sentenceSplitter();
      let index = 0;
      let asked = 0;
      let spoken: Promise<void> = Promise.resolve();
      let failure: unknown = null;
      const speak = (sentence: string) => {
        // The sentence's text is complete now: its audio's latency counts from here.
        const completeAt = performance.now();
        const text = spokenText(sentence);
        if (!text) return;
        for (const piece of pieces(text)) {
          // The turn's first audio: its first moment as a chunk of its own, ahead of other synthesis.
          const firstPart = !asked++;
          spoken = spoken.then(async () => {
            if (failure || signal.aborted) return;
            const sendAudio = (audio: Buffer, said: string) =>
              send({
                type: 'audio_chunk',
                index: index++,
                format,
                content_type: contentType,
                text: said,
                text_to_audio_ms: Math.round((performance.now() - completeAt) * 10) / 10,
                audio: audio.toString('base64'),
              });
            try {
              // Each chunk a complete file (MP3 info frame, WAV sizes): chunks play back to back without gaps.
              const audio = await deps.speech.speak(
                voiceAgent.voice_id,
                settings(voiceAgent, format, piece),
                signal,
                scope,
                { complete: true, firstPart },
              );
              if (!audio.files) {
                const bytes = await collect(audio);
                if (!signal.aborted) sendAudio(bytes, piece);
                return;
              }
              // The piece's text goes with its first file; the files after it continue the same words.
              let said = piece;
              for await (const file of audio.body) {
                if (signal.aborted) return;
                sendAudio(file, said);
                said = '';
              }
            } catch (error) {
              if (!signal.aborted) failure = error;
            }
          });
        }
      };
      let result: TurnResult | null = null;
      let citations: VoiceCitation[] = [];
      try {
        result = await deps.turns.run(turn, signal, (event) => {
          if (event.type === 'chunk' && event.kind === 'citations') citations = citationsOf(event);
          if (event.type !== 'agent_text_chunk') return;
          const content = String(event.content);
          send({ type: 'agent_text_chunk', content });
          for (const sentence of splitter.push(content)) speak(sentence);
        });
        const rest = splitter.rest();
        if (rest) speak(rest);
      } catch (error) {
        failure ??= error;
      }
      await spoken;
      if (signal.aborted) return;
      if (citations.length && !failure) send({ type: 'citations', citations });
      if (failure) send({ type: 'error', status: statusOf(failure), detail: detailOf(failure) });
      send({ type: 'end', conversation_id: turn.conversation.id, message_id: result?.message_id ?? null });
    },

    /** Runs the turn, then speaks the whole answer: one audio body, streamed while it is encoded. */
    async whole(prepared: PreparedVoiceTurn, signal: AbortSignal) {
      const result = await deps.turns.run(prepared.turn, signal);
      const text = spokenText(result.agent_response_text);
      if (!text) throw new AppError(502, 'The agent gave no answer to speak', 'BadGateway');
      const audio = await deps.speech.speak(
        prepared.voiceAgent.voice_id,
        settings(prepared.voiceAgent, prepared.format, text.slice(0, deps.speech.maxTextChars)),
        signal,
        { companyId: prepared.voiceAgent.company_id },
      );
      return { result, audio, transcript: prepared.transcript };
    },
  };
}

export type VoiceRespond = ReturnType<typeof createVoiceRespond>;

/** A text for a response header: percent-encoded (UTF-8), at most `max` encoded bytes, cut on a character. */
export function headerText(text: string, max = 4096): { value: string; truncated: boolean } {
  const full = encodeURIComponent(text);
  if (full.length <= max) return { value: full, truncated: false };
  let value = '';
  for (const char of text) {
    const next = encodeURIComponent(char);
    if (value.length + next.length > max) break;
    value += next;
  }
  return { value, truncated: true };
}

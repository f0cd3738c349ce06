/** The OpenAI-compatible endpoint (`/v1`): deployed agents behind OpenAI's chat-completions and Responses protocols, the knowledge base's embedder, and the voice family's speech behind its audio routes. */
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { ChatModule } from '../chat/index.js';
import type { VoiceSpeechService } from '../voice-agents/index.js';
import { createOpenAiAudio } from './openai-api.audio.js';
import { createEmbeddings, type EmbeddingState } from './openai-api.embeddings.js';
import { createResponses } from './openai-api.responses.js';
import { createOpenAiService } from './openai-api.service.js';

export function createOpenAiModule(deps: {
  db: Db;
  clock: Clock;
  chat: Pick<ChatModule, 'turns'>;
  embedding: EmbeddingState;
  /** The voice family's speech service, behind `/v1/audio/*`. */
  speech: VoiceSpeechService;
}) {
  const completions = createOpenAiService({ db: deps.db, clock: deps.clock, turns: deps.chat.turns });
  const responses = createResponses({
    db: deps.db,
    clock: deps.clock,
    turns: deps.chat.turns,
    prepareTurn: completions.prepareTurn,
  });
  const embeddings = createEmbeddings(deps.embedding, deps.clock.now());
  const audio = createOpenAiAudio({ db: deps.db, speech: deps.speech });
  return { completions, responses, embeddings, audio, maxAudioBytes: deps.speech.maxAudioBytes };
}

export type OpenAiModule = ReturnType<typeof createOpenAiModule>;

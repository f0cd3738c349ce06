/**
 * The protocol front ends over the platform's services, built by the container: OpenAI's (`/v1`),
 * ElevenLabs' (`/elevenlabs`) and the Model Context Protocol (`/mcp`).
 */
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { Clock } from './lib/clock.js';
import type { ChatModule } from './modules/chat/index.js';
import { createElevenLabsApi, type ElevenLabsApi } from './modules/elevenlabs-api/index.js';
import type { KnowledgeModule } from './modules/knowledge/index.js';
import { createMcpModule, type McpModule } from './modules/mcp/index.js';
import { createOpenAiModule, type OpenAiModule } from './modules/openai-api/index.js';
import type { SupportQueriesService } from './modules/support-queries/index.js';
import type { VoiceSpeechService } from './modules/voice-agents/index.js';

export interface ProtocolFronts {
  /** The OpenAI-compatible endpoint (`/v1`): chat turns and the audio routes through OpenAI's protocol. */
  openAi: OpenAiModule;
  /** ElevenLabs' protocol over the voice speech (`/elevenlabs`). */
  elevenLabs: ElevenLabsApi;
  /** The MCP server (`/mcp`): knowledge, agents and support queries to MCP clients. */
  mcp: McpModule;
}

export function createProtocolFronts(deps: {
  config: Readonly<Config>;
  db: Db;
  clock: Clock;
  chat: ChatModule;
  knowledge: KnowledgeModule;
  embedding: Parameters<typeof createOpenAiModule>[0]['embedding'];
  supportQueries: SupportQueriesService;
  voiceSpeech: VoiceSpeechService;
  log: { warn(obj: object, msg: string): void };
}): ProtocolFronts {
  const { config, db, clock, chat } = deps;
  return {
    openAi: createOpenAiModule({ db, clock, chat, embedding: deps.embedding, speech: deps.voiceSpeech }),
    elevenLabs: createElevenLabsApi(deps.voiceSpeech),
    mcp: createMcpModule({
      db,
      knowledge: deps.knowledge,
      supportQueries: deps.supportQueries,
      turns: chat.turns,
      limits: { ...config.mcp, keepAliveMs: config.chat.heartbeatMs },
      version: '0.1.0',
      log: deps.log,
    }),
  };
}

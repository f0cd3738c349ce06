import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { companyContext, requireRole } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { SkipLimit } from '../../http/schemas.js';
import {
  ArabicVoicesQuery,
  CreateVoiceAgentBody,
  EnglishVoicesQuery,
  UpdateVoiceAgentBody,
  VoiceAgent,
  VoiceAgentParams,
  VoiceList,
} from './voice-agents.schemas.js';
import type { VoiceAgentsService } from './voice-agents.service.js';

const errors = errorResponses('detail');
const tags = ['voice-agents'];
const write = requireRole('developer');

/** The voice agents family under /api/public: records and the curated voice lists. */
export function voiceAgentsRoutes(voiceAgents: VoiceAgentsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/voice-agents',
      {
        schema: {
          operationId: 'listVoiceAgents',
          description:
            "The company's voice agents, oldest first, with their voices and settings, page by page (`skip`, `limit`: default 100, max 1000).",
          tags,
          summary: "The company's voice agents, oldest first",
          querystring: Type.Object(SkipLimit(100, 1000)),
          response: { 200: Type.Array(VoiceAgent), ...errors },
        },
      },
      async (request) => voiceAgents.list(companyContext(request), request.query.skip, request.query.limit),
    );

    app.post(
      '/voice-agents',
      {
        preHandler: write,
        schema: {
          operationId: 'createVoiceAgent',
          tags,
          summary: 'Create a voice agent on a curated (or provider) voice (developer)',
          description:
            'Defaults: active false, temperature 0.7, voice_speed 100, voice_stability 0.5, voice_similarity_boost 0.5, voice_style 0.0, model_id eleven_turbo_v2_5, output_format mp3_44100_128; voice_name and language from the catalog voice.',
          body: CreateVoiceAgentBody,
          response: { 201: VoiceAgent, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await voiceAgents.create(companyContext(request), request.body)),
    );

    app.get(
      '/voice-agents/english',
      {
        schema: {
          operationId: 'listEnglishVoices',
          description:
            'Curated voices that speak English, featured first then by name, filtered by gender, category, accent and featured_only; at most max_voices (default 100, max 100).',
          tags,
          summary: 'Curated English voices, featured first (gender, category, accent, featured_only, max_voices ≤ 100)',
          querystring: EnglishVoicesQuery,
          response: { 200: VoiceList, ...errors },
        },
      },
      async (request) => voiceAgents.englishVoices(request.query),
    );

    app.get(
      '/voice-agents/arabic',
      {
        schema: {
          operationId: 'listArabicVoices',
          description:
            'Curated voices that speak Arabic (Modern Standard, Gulf, Egyptian, Levantine), the bilingual ones included; optionally of one gender.',
          tags,
          summary: 'Curated voices that speak Arabic, bilingual ones included (gender male or female)',
          querystring: ArabicVoicesQuery,
          response: { 200: VoiceList, ...errors },
        },
      },
      async (request) => voiceAgents.arabicVoices(request.query.gender),
    );

    app.get(
      '/voice-agents/multilingual',
      {
        schema: {
          operationId: 'listMultilingualVoices',
          description: 'Curated voices that speak both English and Arabic.',
          tags,
          summary: 'Curated voices that speak both English and Arabic',
          response: { 200: VoiceList, ...errors },
        },
      },
      async () => voiceAgents.multilingualVoices(),
    );

    app.get(
      '/voice-agents/:id',
      {
        schema: {
          operationId: 'getVoiceAgent',
          description: 'One voice agent of the company (an extension: the interface lists no read of one record).',
          tags,
          summary: 'One voice agent of the company',
          params: VoiceAgentParams,
          response: { 200: VoiceAgent, ...errors },
        },
      },
      async (request) => voiceAgents.get(companyContext(request), request.params.id),
    );

    app.put(
      '/voice-agents/:id',
      {
        preHandler: write,
        schema: {
          operationId: 'updateVoiceAgent',
          description:
            "Changes the fields sent; a new voice_id without voice_name takes the new voice's name; main_agent_id null unlinks the agent.",
          tags,
          summary: 'Change any of the fields sent (developer)',
          params: VoiceAgentParams,
          body: UpdateVoiceAgentBody,
          response: { 200: VoiceAgent, ...errors },
        },
      },
      async (request) => voiceAgents.update(companyContext(request), request.params.id, request.body),
    );

    app.delete(
      '/voice-agents/:id',
      {
        preHandler: write,
        schema: {
          operationId: 'deleteVoiceAgent',
          description: 'Deletes a voice agent of the company.',
          tags,
          summary: 'Delete a voice agent (developer)',
          params: VoiceAgentParams,
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await voiceAgents.remove(companyContext(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/**
 * Voice agents: the company's voice agents (a voice and its settings for a main agent) and the
 * curated voice lists. Tenancy is in every query; the main agent must be the caller's company's;
 * a voice must be in the catalog or, with a provider configured, known to the provider.
 */
import type { Db } from '../../db/database.js';
import type { CompanyContext } from '../../http/caller.js';
import { truncateQuoted } from '../../http/errors.js';
import { OUTPUT_FORMATS } from '../../ports/text-to-speech.js';
import { findAgent } from '../agents/index.js';
import {
  arabicVoices,
  englishVoices,
  findCatalogVoice,
  multilingualVoices,
  type EnglishFilters,
} from './voice-catalog.js';
import { VoiceAgentErrors } from './voice-agents.errors.js';
import type { ProviderVoices } from './voice-agents.ports.js';
import * as repo from './voice-agents.repo.js';
import {
  LANGUAGES,
  type CreateVoiceAgentBody,
  type CuratedVoice,
  type UpdateVoiceAgentBody,
  type VoiceAgent,
} from './voice-agents.schemas.js';

export interface VoiceAgentsDeps {
  db: Db;
  /** The provider's voices (ElevenLabs), when one is configured; null accepts catalog voices only. */
  providerVoices?: ProviderVoices | null;
  /** How long the provider may take to answer whether it knows a voice. */
  providerTimeoutMs?: number;
}

export function toVoiceAgent(row: repo.VoiceAgentRow): VoiceAgent {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    voice_id: row.voice_id,
    voice_name: row.voice_name,
    language: row.language,
    model_id: row.model_id,
    active: row.active,
    temperature: row.temperature,
    voice_speed: row.voice_speed,
    voice_stability: row.voice_stability,
    voice_similarity_boost: row.voice_similarity_boost,
    voice_style: row.voice_style,
    output_format: row.output_format,
    company_id: row.company_id,
    main_agent_id: row.main_agent_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const FORMATS: readonly string[] = OUTPUT_FORMATS;
const LANGUAGE_CODES: readonly string[] = LANGUAGES;

function checkLanguage(language: string | undefined) {
  if (language !== undefined && !LANGUAGE_CODES.includes(language))
    throw VoiceAgentErrors.invalidField(
      'language',
      `unknown language '${truncateQuoted(language)}'; supported: ${LANGUAGES.join(', ')}`,
    );
}

function checkFormat(format: string | undefined) {
  if (format !== undefined && !FORMATS.includes(format))
    throw VoiceAgentErrors.invalidField(
      'output_format',
      `unsupported format '${truncateQuoted(format)}'; supported: ${OUTPUT_FORMATS.join(', ')}`,
    );
}

export function createVoiceAgentsService(deps: VoiceAgentsDeps) {
  const { db, providerVoices = null, providerTimeoutMs = 10_000 } = deps;

  /** The catalog entry of `voiceId`, null for a provider voice; 400 for a voice neither knows. */
  async function resolveVoice(voiceId: string): Promise<CuratedVoice | null> {
    const entry = findCatalogVoice(voiceId);
    if (entry) return entry;
    if (voiceId.trim() !== voiceId || voiceId.startsWith('sb-') || !providerVoices)
      throw VoiceAgentErrors.invalidField('voice_id', unknownVoice(voiceId));
    let known = false;
    try {
      known = await providerVoices.hasVoice(voiceId, AbortSignal.timeout(providerTimeoutMs));
    } catch {
      throw VoiceAgentErrors.invalidField(
        'voice_id',
        `could not check voice '${truncateQuoted(voiceId)}' with the voice provider; try again or pick a curated voice`,
      );
    }
    if (!known) throw VoiceAgentErrors.invalidField('voice_id', unknownVoice(voiceId));
    return null;
  }

  function unknownVoice(voiceId: string) {
    const where = providerVoices ? "the curated voices or the voice provider's" : 'the curated voices';
    return `unknown voice '${truncateQuoted(voiceId)}'; pick one of ${where} (GET /api/public/voice-agents/english, /arabic, /multilingual)`;
  }

  async function checkAgent(companyId: string, agentId: string | null | undefined) {
    if (agentId && !(await findAgent(db, companyId, agentId))) throw VoiceAgentErrors.unknownAgent(agentId);
  }

  return {
    async list(ctx: CompanyContext, skip = 0, limit = 100): Promise<VoiceAgent[]> {
      return (await repo.listVoiceAgents(db, ctx.companyId, skip, limit)).map(toVoiceAgent);
    },

    async get(ctx: CompanyContext, id: string): Promise<VoiceAgent> {
      const row = await repo.findVoiceAgent(db, ctx.companyId, id);
      if (!row) throw VoiceAgentErrors.notFound(id);
      return toVoiceAgent(row);
    },

    async create(ctx: CompanyContext, body: CreateVoiceAgentBody): Promise<VoiceAgent> {
      checkLanguage(body.language);
      checkFormat(body.output_format);
      const voice = await resolveVoice(body.voice_id);
      await checkAgent(ctx.companyId, body.main_agent_id);
      const row = await repo.insertVoiceAgent(db, ctx.companyId, ctx.userId, {
        ...body,
        voice_name: body.voice_name ?? voice?.name ?? '',
        language: body.language ?? voice?.languages[0] ?? 'en',
      });
      return toVoiceAgent(row);
    },

    async update(ctx: CompanyContext, id: string, body: UpdateVoiceAgentBody): Promise<VoiceAgent> {
      const current = await repo.findVoiceAgent(db, ctx.companyId, id);
      if (!current) throw VoiceAgentErrors.notFound(id);
      checkLanguage(body.language);
      checkFormat(body.output_format);
      const changesVoice = body.voice_id !== undefined && body.voice_id !== current.voice_id;
      const voice = changesVoice ? await resolveVoice(body.voice_id as string) : undefined;
      await checkAgent(ctx.companyId, body.main_agent_id);
      const voiceName = body.voice_name ?? (changesVoice ? (voice?.name ?? '') : undefined);
      const row = await repo.updateVoiceAgent(db, ctx.companyId, id, { ...body, voice_name: voiceName });
      if (!row) throw VoiceAgentErrors.notFound(id);
      return toVoiceAgent(row);
    },

    async remove(ctx: CompanyContext, id: string): Promise<void> {
      if (!(await repo.deleteVoiceAgent(db, ctx.companyId, id))) throw VoiceAgentErrors.notFound(id);
    },

    englishVoices: (filters: EnglishFilters) => ({ voices: englishVoices(filters) }),
    arabicVoices: (gender?: string) => ({ voices: arabicVoices(gender) }),
    multilingualVoices: () => ({ voices: multilingualVoices() }),
  };
}

export type VoiceAgentsService = ReturnType<typeof createVoiceAgentsService>;

/**
 * The voice agents module's surface: the service and routes the container and the app mount,
 * and the curated catalog the TTS routes read (`findCatalogVoice` gives an entry with the
 * espeak-ng voice that renders it offline).
 */
import { catalogVoices } from './voice-catalog.js';
import { createVoiceAgentsService, type VoiceAgentsDeps, type VoiceAgentsService } from './voice-agents.service.js';

export { CatalogError, catalogVoices, findCatalogVoice, offlineVoiceFor } from './voice-catalog.js';
export { voiceAgentsRoutes } from './voice-agents.routes.js';
export { voiceSpeechRoutes } from './voice-agents.speech.routes.js';
export { voiceRespondRoutes } from './voice-agents.respond.routes.js';
export { createVoiceRespond, type VoiceRespond } from './voice-agents.respond.js';
export {
  createVoiceSpeechService,
  type SpeechScope,
  type VoiceSpeechDeps,
  type VoiceSpeechService,
} from './voice-agents.speech.js';
export {
  DEFAULT_MODEL_ID,
  LANGUAGES,
  VOICE_SPEED,
  type CuratedVoice,
  type VoiceAgent,
} from './voice-agents.schemas.js';
export { findVoiceAgent, type VoiceAgentRow } from './voice-agents.repo.js';
export type { ProviderVoices } from './voice-agents.ports.js';
export type { VoiceAgentsService } from './voice-agents.service.js';

/** Builds the module; the catalog is loaded and checked here, so a broken one stops start-up. */
export function createVoiceAgentsModule(deps: VoiceAgentsDeps): VoiceAgentsService {
  catalogVoices();
  return createVoiceAgentsService(deps);
}

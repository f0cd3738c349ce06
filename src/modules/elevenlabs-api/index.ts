/** The ElevenLabs-compatible endpoint (`/elevenlabs`): the voice family's speech in ElevenLabs' protocol. */
export { elevenLabsRoutes } from './elevenlabs-api.routes.js';
export { createElevenLabsApi, type ElevenLabsApi } from './elevenlabs-api.service.js';

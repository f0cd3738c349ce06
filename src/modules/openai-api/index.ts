/** The OpenAI-compatible endpoint (`/v1`): deployed agents behind OpenAI's chat-completions and Responses protocols, the knowledge base's embedder, and the voice family's speech behind its audio routes. */
export { openAiRoutes, type OpenAiRouteOptions } from './openai-api.routes.js';
export { createOpenAiModule, type OpenAiModule } from './openai-api.module.js';

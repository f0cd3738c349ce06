/** The OpenAI-compatible endpoint (`/v1`): deployed agents behind OpenAI's chat-completions protocol. */
import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { ChatModule } from '../chat/index.js';
import { createOpenAiService } from './openai-api.service.js';

export { openAiRoutes, type OpenAiRouteOptions } from './openai-api.routes.js';
export type { OpenAiService } from './openai-api.service.js';

export function createOpenAiModule(deps: { db: Db; clock: Clock; chat: Pick<ChatModule, 'turns'> }) {
  return createOpenAiService({ db: deps.db, clock: deps.clock, turns: deps.chat.turns });
}

/** The inbox family (`/api/public/conversations`): hand-off to a person, over the chat module's conversations. */
export { createInboxService, type InboxService } from './inbox.service.js';
export { inboxRoutes } from './inbox.routes.js';
export { InboxConversation, InboxMessage } from './inbox.schemas.js';

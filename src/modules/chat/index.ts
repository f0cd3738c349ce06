/** createChatModule(deps) → the conversations service and the turn runner the routes use. */
export type { ServingRecord } from './chat.turns.js';
export type { PreparedTurn, TurnResult } from './chat.turn-types.js';
export type { VerifiedCustomer } from './chat.runtime.js';
export type { StreamEvent } from './chat.schemas.js';
export { chatJobs } from './chat.escalation.js';
export { chatRoutes } from './chat.routes.js';
export { createChatModule, type ChatModule, type ChatModuleDeps } from './chat.module.js';
export { clientSignal, resumeStream, streamPrepared, type StreamHooks, type StreamOptions } from './chat.stream.js';
export { Conversation, Message } from './chat.schemas.js';
export type { AgentTool, AgentToolResult, AgentTools, ServedWorkflow, WorkflowRouter } from './chat.ports.js';
export type { ChannelDeliverer, DeliveryOutcome, DeliveryRegistry, OutboundReply } from './chat.delivery.js';
export {
  CONVERSATION_EVENTS_CHANNEL,
  type ConversationEvent,
  type ConversationEvents,
  type EventFilter,
  type InboxStatus,
} from './chat.conversation-events.js';
export { streamConversationEvents } from './chat.conversation-stream.js';
export { inboxStatus, statusEvent } from './chat.handoff-state.js';
export type { Person } from './chat.handoff.js';

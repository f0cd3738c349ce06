/** Kysely types of the chat tables (migrations/0040_create_conversations.sql). */
import type { ColumnType, Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

export interface Citation {
  chunk_id: string;
  document_id: string;
  title: string;
  collection_id: string | null;
  score: number;
  /** The passage the answer relied on (trimmed). */
  text: string;
}

export interface ConversationsTable {
  id: Generated<string>;
  company_id: string;
  agent_id: string;
  deployment_id: string | null;
  chat_token_id: string | null;
  title: Generated<string>;
  status: Generated<'open' | 'closed'>;
  external_user_id: string | null;
  end_user_id: string | null;
  support_query_id: string | null;
  /** The workflow whose key reached this conversation (migration 0080); agent_id is the agent answering now. */
  workflow_id: ColumnType<string | null, string | null | undefined, string | null>;
  channel: string | null;
  region: string | null;
  message_count: Generated<number>;
  last_message_at: Timestamp | null;
  closed_at: Timestamp | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
  /** Who answers an open conversation (migration 0130): the agent, nobody yet, or a person. */
  handler: Generated<Handler>;
  assignee_id: ColumnType<string | null, string | null | undefined, string | null>;
  handoff_reason: ColumnType<string | null, string | null | undefined, string | null>;
  handoff_at: ColumnType<Date | null, Date | null | undefined, Date | string | null>;
}

/** `bot`: the agent answers; `handoff`: waiting for a person; `assigned`: a person answers. */
export type Handler = 'bot' | 'handoff' | 'assigned';

/** How a person's message went out on the conversation's channel (migration 0130). */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface ConversationMessagesTable {
  id: Generated<string>;
  seq: ColumnType<number, never, never>;
  company_id: string;
  conversation_id: string;
  role: 'user' | 'assistant' | 'human';
  content: string;
  citations: ColumnType<Citation[], string | undefined, string>;
  /** The turn's tool calls (migration 0042; chat.tools.ts `ToolAction`). */
  tool_calls: ColumnType<Record<string, unknown>[], string | undefined, string>;
  model: string | null;
  /** The agent that wrote an answer (migration 0080). */
  agent_id: ColumnType<string | null, string | null | undefined, string | null>;
  was_resolved: boolean | null;
  response_time_ms: number | null;
  finish_reason: 'stop' | 'aborted' | 'error' | null;
  created_at: DefaultTimestamp;
  /** A person's message (role human): its author, and its delivery on the channel (migration 0130). */
  author_id: ColumnType<string | null, string | null | undefined, string | null>;
  delivery_status: ColumnType<DeliveryStatus | null, DeliveryStatus | null | undefined, DeliveryStatus | null>;
  delivery_error: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ConversationFeedbackTable {
  id: Generated<string>;
  company_id: string;
  conversation_id: string;
  rating: number;
  comment: Generated<string>;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

/** A turn in progress (migration 0106; chat.turn-journal.ts). */
export interface ChatPendingTurnsTable {
  id: string;
  company_id: string;
  conversation_id: string;
  agent_id: string;
  deployment_id: string | null;
  query: string;
  owner: string;
  started_at: DefaultTimestamp;
}

/** The processes running turns, by their heartbeat (migration 0106). */
export interface ChatTurnOwnersTable {
  id: string;
  seen_at: DefaultTimestamp;
}

export interface ChatTables {
  chat_pending_turns: ChatPendingTurnsTable;
  chat_turn_owners: ChatTurnOwnersTable;
  conversations: ConversationsTable;
  conversation_messages: ConversationMessagesTable;
  conversation_feedback: ConversationFeedbackTable;
}

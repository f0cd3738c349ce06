/** Table types of the channels module (migrations/0110_create_channel_events.sql). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp } from '../../db/columns.js';

export type ChannelName = 'slack' | 'whatsapp' | 'teams';
export type ChannelEventState = 'queued' | 'answered' | 'done';

export interface ChannelThreadsTable {
  deployment_id: string;
  thread_key: string;
  company_id: string;
  channel: ChannelName;
  conversation_id: string | null;
  /** Where replies go (the vendor's addressing: channel and thread, number, service URL and conversation). */
  reply_to: unknown;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface ChannelEventsTable {
  id: Generated<string>;
  deployment_id: string;
  thread_key: string;
  company_id: string;
  kind: 'message' | 'welcome';
  input: unknown;
  state: Generated<ChannelEventState>;
  attempts: Generated<number>;
  worker_id: number | null;
  answer: unknown;
  error: string | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface ChannelEventKeysTable {
  deployment_id: string;
  key: string;
  created_at: DefaultTimestamp;
}

export interface ChannelNoticesTable {
  deployment_id: string;
  kind: string;
  last_at: Date;
}

export interface ChannelsTables {
  channel_threads: ChannelThreadsTable;
  channel_events: ChannelEventsTable;
  channel_event_keys: ChannelEventKeysTable;
  channel_notices: ChannelNoticesTable;
}

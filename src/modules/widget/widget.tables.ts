/** Kysely types of the widget tables (migrations/0120_create_widget_keys.sql). */
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

export interface WidgetKeysTable {
  deployment_id: string;
  company_id: string;
  key: string;
  created_at: DefaultTimestamp;
  rotated_at: Timestamp | null;
}

export interface WidgetConversationsTable {
  conversation_id: string;
  company_id: string;
  deployment_id: string;
  visitor_id: string;
  created_at: DefaultTimestamp;
}

export interface WidgetTables {
  widget_keys: WidgetKeysTable;
  widget_conversations: WidgetConversationsTable;
}

/** Kysely types of the notification tables (migrations/0020_create_support_and_notifications.sql). */
import type { Generated } from 'kysely';
import type { DefaultTimestamp, Timestamp } from '../../db/columns.js';

export const NOTIFICATION_TYPES = [
  'agent_action',
  'email_sent',
  'slack_message',
  'api_call',
  'tool_usage',
  'system',
] as const;
export const NOTIFICATION_CATEGORIES = ['system', 'user', 'agent', 'deployment', 'billing', 'security'] as const;
export const NOTIFICATION_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export const RECIPIENT_STATUSES = ['unread', 'read', 'archived'] as const;

export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export type NotificationCategory = (typeof NOTIFICATION_CATEGORIES)[number];
export type NotificationPriority = (typeof NOTIFICATION_PRIORITIES)[number];
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export interface NotificationsTable {
  id: Generated<string>;
  company_id: string;
  sender_id: string | null;
  notification_type: NotificationType;
  category: NotificationCategory;
  priority: Generated<NotificationPriority>;
  title: string;
  message: string;
  metadata: Generated<Record<string, string>>;
  action_url: string | null;
  expires_at: Timestamp | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface NotificationRecipientsTable {
  id: Generated<string>;
  notification_id: string;
  company_id: string;
  user_id: string;
  status: Generated<RecipientStatus>;
  read_at: Timestamp | null;
  created_at: DefaultTimestamp;
  updated_at: DefaultTimestamp;
}

export interface NotificationTables {
  notifications: NotificationsTable;
  notification_recipients: NotificationRecipientsTable;
}

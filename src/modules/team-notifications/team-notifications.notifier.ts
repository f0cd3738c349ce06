/**
 * How the platform tells a company's team what happened: `notify` writes the notification and
 * one recipient row per member of the company at that moment, inside the caller's transaction.
 */
import type { Executor } from '../../db/database.js';
import { AppErrors } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import * as repo from './team-notifications.repo.js';
import type { NotificationCategory, NotificationPriority, NotificationType } from './team-notifications.tables.js';

export interface NotifyInput {
  companyId: string;
  /** The team member who caused it; null or absent for agents and the platform. */
  senderId?: string | null;
  notificationType: NotificationType;
  category: NotificationCategory;
  priority?: NotificationPriority;
  title: string;
  message: string;
  /** agent_id, query_id, action_type, recipient_email, email_subject, tool_used, execution_time … (strings). */
  metadata?: Record<string, string>;
  actionUrl?: string | null;
  expiresAt?: Date | null;
  /** When it happened; the clock's now by default (the demo seeder writes history). */
  createdAt?: Date;
}

export function createNotifier(deps: { clock: Clock }) {
  return {
    async notify(executor: Executor, input: NotifyInput): Promise<{ id: string }> {
      const metadata = input.metadata ?? {};
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== 'string') throw AppErrors.validation(`Notification metadata '${key}' must be a string`);
      }
      const createdAt = input.createdAt ?? deps.clock.now();
      return repo.insertNotification(executor, {
        company_id: input.companyId,
        sender_id: input.senderId ?? null,
        notification_type: input.notificationType,
        category: input.category,
        priority: input.priority ?? 'medium',
        title: input.title,
        message: input.message,
        metadata,
        action_url: input.actionUrl ?? null,
        expires_at: input.expiresAt ?? null,
        created_at: createdAt,
        updated_at: createdAt,
      });
    },
  };
}

export type Notifier = ReturnType<typeof createNotifier>;

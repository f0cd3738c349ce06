/**
 * The team-notifications family, with full paths (`/team-notifications`, `/team-notifications/{notification_id}` …).
 * Registered by app.ts inside the insights scope (x-api-key, 1000/hour and 100/minute per key).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { companyContext } from '../../http/auth.js';
import { errorResponses } from '../../http/errors.js';
import { Uuid } from '../../http/schemas.js';
import {
  ListParams,
  Notification,
  NotificationPage,
  NotificationStats,
  Recipient,
  StatsParams,
  StatusBody,
  UserListParams,
} from './team-notifications.schemas.js';
import type { TeamNotificationsService } from './team-notifications.service.js';

const errors = errorResponses('insights', [400, 401, 403, 404, 429, 500]);
const tags = ['team notifications'];

export function teamNotificationsRoutes(service: TeamNotificationsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/team-notifications',
      {
        schema: {
          operationId: 'listTeamNotifications',
          tags,
          summary: "The company's notifications, newest first, with the caller's read status",
          description:
            "The company's notifications, newest first, filtered by type, agent, query, priority, read status, sender and dates, each with the caller's read status.",
          querystring: ListParams,
          response: { 200: NotificationPage, ...errors },
        },
      },
      async (request) => service.list(companyContext(request), request.query),
    );

    app.get(
      '/team-notifications/stats',
      {
        schema: {
          operationId: 'teamNotificationStats',
          tags,
          summary: "Counts by read status, category and priority (the caller's or user_id's view)",
          description:
            'Counts of notifications by read status, category and priority for a window, for the caller or for `user_id`.',
          querystring: StatsParams,
          response: { 200: NotificationStats, ...errors },
        },
      },
      async (request) => service.stats(companyContext(request), request.query),
    );

    app.get(
      '/team-notifications/users/:user_id',
      {
        schema: {
          operationId: 'listUserNotifications',
          tags,
          summary: "A user's notifications with their read status (own, or any as admin)",
          description:
            "A user's notifications with their read status. Members see their own; admins may read anyone's.",
          params: Type.Object({ user_id: Uuid() }),
          querystring: UserListParams,
          response: { 200: NotificationPage, ...errors },
        },
      },
      async (request) => service.listForUser(companyContext(request), request.params.user_id, request.query),
    );

    app.get(
      '/team-notifications/:notification_id',
      {
        schema: {
          operationId: 'getTeamNotification',
          tags,
          summary: 'One notification with its sender and recipients',
          description: 'One notification of the company with its sender and recipients.',
          params: Type.Object({ notification_id: Uuid() }),
          response: { 200: Notification, ...errors },
        },
      },
      async (request) => service.get(companyContext(request), request.params.notification_id),
    );

    app.patch(
      '/team-notifications/:notification_id/users/:user_id/status',
      {
        schema: {
          operationId: 'setNotificationStatus',
          tags,
          summary: "Set a user's read status (own, or any as admin)",
          description:
            "Sets a user's read status of a notification (unread, read or archived). Members set their own; admins may set anyone's.",
          params: Type.Object({ notification_id: Uuid(), user_id: Uuid() }),
          body: StatusBody,
          response: { 200: Recipient, ...errors },
        },
      },
      async (request) =>
        service.setStatus(
          companyContext(request),
          request.params.notification_id,
          request.params.user_id,
          request.body.status,
        ),
    );
  };
}

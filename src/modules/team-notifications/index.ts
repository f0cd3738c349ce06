/**
 * The team-notifications module's surface: the read-only family's service and routes, and the
 * notifier and types other modules use to tell the team what agents did.
 */
export type { Notifier } from './team-notifications.notifier.js';
export { teamNotificationsRoutes } from './team-notifications.routes.js';
export { createTeamNotificationsService, type TeamNotificationsService } from './team-notifications.service.js';
export type { NotificationType } from './team-notifications.tables.js';

/**
 * The channels module's surface: a deployment on Slack, WhatsApp or Teams answers customers there
 * (DESIGN §12). createChannelsService (inbound routes' rules, the answering job, the delivery
 * other modules send through: `sendToConversation`), its routes and jobs.
 */
export { channelJobs } from './channels.jobs.js';
export { channelsRoutes } from './channels.routes.js';
export { createChannelsService, type ChannelsService } from './channels.service.js';
export type { ChannelTarget } from './channels.targets.js';

/** The deployments module's surface: the service and routes, and the roll-out jobs the container registers. */
export { deploymentJobs } from './deployments.jobs.js';
export { deploymentsRoutes } from './deployments.routes.js';
export { createDeploymentsService, type ChannelDeployment, type DeploymentsService } from './deployments.service.js';
export { DELIVERING_CHANNELS } from './deployment-fields.js';

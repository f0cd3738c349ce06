/**
 * The deployments module's surface: the service and routes, the roll-out jobs the container
 * registers, and the reader of servable deployments the protocol modules (MCP, `/v1`) list keys from.
 */
export { deploymentJobs } from './deployments.jobs.js';
export { deploymentsRoutes } from './deployments.routes.js';
export { createDeploymentsService, type ChannelDeployment, type DeploymentsService } from './deployments.service.js';
export { DELIVERING_CHANNELS } from './deployment-fields.js';
export { listServableDeployments, type ServableDeployment } from './deployments.servable.js';
